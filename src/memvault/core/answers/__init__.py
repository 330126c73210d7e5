"""Answers: the brain's facts recalled beside conversation memory, for a memory key granted brain
scopes. The one place that reads both wings: the joint search every memory-search surface runs
(``SEARCH``), the memory router's recall (``prepare``) and the reading of a receipt with the facts
it names (``RECEIPT``). A key without a grant reads conversation memory only, exactly as the memory
wing alone does."""

from memvault.core.answers.grants import credential_of
from memvault.core.answers.operations import RECEIPT, SEARCH
from memvault.core.answers.results import RecalledFact, SearchResult
from memvault.core.answers.router import prepare

__all__ = ["RECEIPT", "SEARCH", "RecalledFact", "SearchResult", "credential_of", "prepare"]
