from __future__ import annotations

import gc

from memvault.core.deps import Deps
from memvault.runtime.local import start_local


async def test_what_a_serving_process_loaded_at_startup_is_set_apart_from_the_collector(deps: Deps) -> None:
    gc.unfreeze()
    try:
        await start_local(deps)
        # A full collection in the middle of a call then walks only what was made since.
        assert gc.get_freeze_count() > 1000
        assert gc.get_freeze_count() > len(gc.get_objects())
    finally:
        gc.unfreeze()
