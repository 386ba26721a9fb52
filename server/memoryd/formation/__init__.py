"""Memory formation (docs/MEMORY.md): rolling summary slices, facts with provenance and a
profile per user, derived from each tenant's event log by an OpenAI-compatible model.

Each strategy is a log consumer (consumers/runtime.py) with its own cursor: `summary.py`,
`facts.py`, `profile.py`. Their records live in the Store's metadata (`records.py`, the one
storage rule, checked against every adapter by tests/conformance). The model is a port
(`llm.ChatModel`), implemented over the `openai` SDK in `openai_chat.py`; `meter.py` counts
its calls and tokens and holds each tenant to its concurrency and token budget. Nothing here
imports grpc or a database driver.
"""
