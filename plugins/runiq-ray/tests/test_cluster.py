"""Without a Ray in the process, the host starts a local cluster and shuts it down when it stops.

Runs in a subprocess: the rest of the suite shares one session cluster.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

SCRIPT = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path

    import ray
    from runiq.hosting import HostBuilder
    from runiq.rag import HashingEmbedding, RagIngestionManager, RagIngestionState, add_runiq_rag

    import runiq_ray.plugin
    from runiq_ray import RayEmbedding

    folder = Path(sys.argv[1])

    async def main() -> None:
        builder = HostBuilder(load_entry_points=False, plugins=[runiq_ray.plugin])
        selection = RayEmbedding(embedding=HashingEmbedding(), workers=1, local_cpus=1)
        def configure(index):
            return index.use_directory(folder, "*.txt").use_embedding(selection).use_in_memory_vector_store()

        add_runiq_rag(builder, lambda rag: rag.add_index("docs", configure))
        async with builder.build() as host:
            operation = await host.services.get(RagIngestionManager).run("docs")
            assert operation.state is RagIngestionState.COMPLETED
            print("running", ray.is_initialized(), operation.progress.produced_embeddings)
        print("stopped", ray.is_initialized())

    asyncio.run(main())
    """
)


def test_the_host_starts_and_stops_its_own_local_cluster(tmp_path: Path) -> None:
    for i in range(5):
        (tmp_path / f"{i}.txt").write_text(f"note {i}")
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path)], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [line for line in done.stdout.splitlines() if line.startswith(("running", "stopped"))]
    assert lines == ["running True 5", "stopped False"]
