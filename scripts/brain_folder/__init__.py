"""The parts of ``scripts/brain_sync.py``: what a notes folder holds and may send (``folder``,
``front_matter``, ``placement``, ``skill_files``), what was last synced (``manifest``), the brain
over HTTP (``remote``), and the two directions (``push``, ``pull``) with their ``report``."""
