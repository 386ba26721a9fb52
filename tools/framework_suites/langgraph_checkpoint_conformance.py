"""LangGraph's checkpoint conformance suite (libs/checkpoint-conformance of a LangGraph
checkout, unchanged) against MemorydSaver, on a memoryd this script starts and stops:

    .venv/bin/python tools/framework_suites/langgraph_checkpoint_conformance.py PATH/TO/langgraph

docs/INTEGRATIONS.md, "Frameworks' own suites", has the counts."""
import asyncio, json, os, subprocess, sys, tempfile, time, uuid
from pathlib import Path

LANGGRAPH = Path(sys.argv[1]).resolve()  # a checkout of github.com/langchain-ai/langgraph
sys.path.insert(0, str(LANGGRAPH / "libs" / "checkpoint-conformance"))
from langgraph.checkpoint.conformance import checkpointer_test, validate  # noqa: E402
from memoryd_client import MemoryClient  # noqa: E402
from memoryd_client.langgraph_checkpoint import MemorydSaver  # noqa: E402

work = Path(tempfile.mkdtemp())
port_file = work / "port"
proc = subprocess.Popen(
    [str(Path(sys.executable).with_name("memoryd")), "serve", "--listen", "127.0.0.1:0", "--http-listen", "off",
     "--data-dir", str(work / "data"), "--port-file", str(port_file), "--log-level", "warning"],
    stdout=open(work / "log", "wb"), stderr=subprocess.STDOUT, start_new_session=True,
)
try:
    while not (port_file.exists() and port_file.read_text().strip()):
        if proc.poll() is not None:
            raise SystemExit((work / "log").read_text()[-3000:])
        time.sleep(0.1)
    target = f"127.0.0.1:{port_file.read_text().strip()}"

    @checkpointer_test(name="MemorydSaver")
    async def memoryd_checkpointer():
        client = MemoryClient(target)
        yield MemorydSaver(client, root=f"conf-{uuid.uuid4().hex[:8]}.")
        await client.close()

    async def main():
        report = await validate(memoryd_checkpointer)
        report.print_report()
        print(json.dumps(report.to_dict())[:3000])
        return report.passed_all_base()

    ok = asyncio.run(main())
    print("PASSED_ALL_BASE", ok)
finally:
    os.killpg(proc.pid, 15)
    proc.wait(30)
sys.exit(0 if ok else 1)
