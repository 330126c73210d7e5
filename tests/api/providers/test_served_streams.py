"""Many streams left early against `memvault serve` itself (its own HTTP protocol, a process of its
own) in front of a fake provider: clients that break out of their loop after the first chunk,
many at once and one after another. The server lets each go without writing the rest of the answer on to the closed
connection (asyncio logs every such stream as a warning), holds no descriptor for them afterwards,
and keeps answering."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import openai
from fake_upstream import FakeUpstream, ServerThread

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from local_http import memvault_serve

MEMVAULT = Path(sys.executable).with_name("memvault")
STREAMS = 40
ONE_AT_A_TIME = 10
DEADLINE_SECONDS = 60.0
# Upstream connections the router's HTTP client may keep for the next calls.
KEPT_ALIVE = 20


def server_pid(url: str) -> int:
    """The `memvault serve` process listening at ``url`` (its command line names the port)."""
    port = url.rsplit(":", 1)[1]
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                command = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"serve" in command and port.encode() in command:
                return int(entry.name)
    raise AssertionError(f"no memvault serve on port {port}")


def open_descriptors(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


async def leave_after_first_chunk(client: openai.AsyncOpenAI, index: int) -> str:
    stream = await client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": f"Stream {index} is left after one chunk."}], stream=True
    )
    first = await anext(aiter(stream))
    await stream.close()
    return first.id


def test_many_streams_left_after_their_first_chunk_leave_nothing_behind(tmp_path: Path) -> None:
    upstream = FakeUpstream(answer="Here is a longer answer, a dozen words or so, sent in many chunks.")
    with ServerThread(upstream) as fake:
        env = {**os.environ, "MEMVAULT_DATA_DIR": str(tmp_path / "data"), "MEMVAULT_EMBEDDER": "hash",
               "MEMVAULT_OPENAI_BASE_URL": fake.url}
        key = subprocess.run([str(MEMVAULT), "keys", "create"], env=env, capture_output=True, text=True,
                             check=True).stdout.strip()
        log = tmp_path / "server.log"
        with log.open("wb") as sink, memvault_serve(env, output=sink) as url:
            pid = server_pid(url)
            before = open_descriptors(pid)

            async def leave_all() -> list[str]:
                async with openai.AsyncOpenAI(base_url=f"{url}/v1", api_key="sk-test", max_retries=0, timeout=60,
                                              default_headers={"X-Memory-Key": key}) as client:
                    return await asyncio.gather(*(leave_after_first_chunk(client, i) for i in range(STREAMS)))

            assert asyncio.run(leave_all()) == ["chatcmpl-fake"] * STREAMS
            client = openai.OpenAI(base_url=f"{url}/v1", api_key="sk-test", default_headers={"X-Memory-Key": key})
            for index in range(ONE_AT_A_TIME):  # as a loop that breaks does, one stream after another
                stream = client.chat.completions.create(
                    model="m", messages=[{"role": "user", "content": f"Left alone {index}."}], stream=True
                )
                next(iter(stream))
                stream.close()
            deadline = time.monotonic() + DEADLINE_SECONDS
            while len(upstream.endings) < STREAMS + ONE_AT_A_TIME or open_descriptors(pid) > before + KEPT_ALIVE:
                assert time.monotonic() < deadline, (len(upstream.endings), open_descriptors(pid), before)
                time.sleep(0.1)
            answer = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "Still there?"}])
            assert answer.choices[0].message.content == upstream.answer
    printed = log.read_text(errors="replace")
    assert "socket.send() raised exception" not in printed, printed[-2000:]
