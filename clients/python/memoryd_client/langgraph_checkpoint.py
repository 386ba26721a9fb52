"""LangGraph checkpointer on memoryd (`pip install 'memoryd-client[langgraph]'`): a graph's
short-term memory (its threads' checkpoints) in the same service as its long-term memory
(memoryd_client.langgraph.MemorydStore).

    from memoryd_client import SyncMemoryClient
    from memoryd_client.langgraph_checkpoint import MemorydSaver

    graph = builder.compile(checkpointer=MemorydSaver(SyncMemoryClient("127.0.0.1:50051")))
    graph.invoke({"messages": [...]}, {"configurable": {"thread_id": "chat-1"}})

A `BaseCheckpointSaver` (sync and async: put, put_writes, get_tuple, list with filter, before
and limit, delete_thread) kept as memoryd metadata records under a root ("langgraph-cp." by
default), in namespaces per thread T and checkpoint namespace N (both escaped: `_name`):

    <root><T>.c.<N>            key checkpoint id  -> the checkpoint (without channel values),
                                                     its metadata, parent, thread and namespace
    <root><T>.l                key <N>            -> the newest checkpoint id of N
    <root><T>.b.<N>            key <channel>.<version> -> one channel value (stored once per
                                                     version, as LangGraph's own savers do)
    <root><T>.w.<N>.<id>       key <task id>.<idx> -> one pending write of checkpoint <id>

Values are LangGraph's serializer's output (serde.dumps_typed: a type and bytes), the bytes
as base64. Pending sends are the TASKS writes of the parent checkpoint, as LangGraph 1.x keeps
them. A record holds at most the server's --max-metadata-bytes (256 KiB by default), so one
channel value may not be larger than about 190 KiB serialized.
"""

from __future__ import annotations

import asyncio
import base64
import builtins
import hashlib
import random
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any
from urllib.parse import quote

from google.protobuf import json_format
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    SerializerProtocol,
    get_checkpoint_id,
    get_checkpoint_metadata,
    writes_sort_key,
)

from memoryd.v1 import metadata_service_pb2

from . import frameworks
from .client import MemoryClient
from .frameworks import Program, every, rpc
from .sync import SyncMemoryClient

DEFAULT_ROOT = "langgraph-cp."
_LONGEST_NAME = 48  # an escaped thread id or namespace longer than this is hashed


def _name(value: str) -> str:
    """A thread id or checkpoint namespace as one label of a memoryd namespace: percent-escaped
    (so "." and every other separator are literal), or "~" and a hash when that is long."""
    escaped = quote(value, safe="").replace(".", "%2E").replace("~", "%7E")
    if len(escaped) <= _LONGEST_NAME:
        return escaped or "%"  # "" (the root graph's namespace) is "%": never an escape
    return "~" + hashlib.blake2b(value.encode("utf-8"), digest_size=16).hexdigest()


def _typed(value: tuple[str, bytes]) -> list[str]:
    return [value[0], base64.b64encode(value[1]).decode("ascii")]


def _untyped(fields: Any) -> tuple[str, bytes]:
    kind, data = (v.string_value for v in fields.list_value.values)
    return kind, base64.b64decode(data)


class MemorydSaver(BaseCheckpointSaver[str]):
    """memoryd as a LangGraph checkpointer (`builder.compile(checkpointer=...)`).

    Args:
        client: a SyncMemoryClient (for put, get_tuple, list, ...) or a MemoryClient (for
            aput, aget_tuple, alist, ...). Without a MemoryClient the async methods run the
            sync ones in a thread; without a SyncMemoryClient the sync ones run the async
            ones on a loop of their own (asyncio.InvalidStateError in a thread whose event
            loop is running, as LangGraph's async savers).
        async_client: the MemoryClient, when `client` is the sync one and both are used.
        root: the namespace prefix of this saver's records; savers with different roots never
            see each other's threads (a root ends with "." and is no prefix of another's).
        serde: LangGraph's serializer (default: its JsonPlusSerializer).
    """

    def __init__(
        self,
        client: SyncMemoryClient | MemoryClient | None = None,
        *,
        async_client: MemoryClient | None = None,
        root: str = DEFAULT_ROOT,
        serde: SerializerProtocol | None = None,
    ) -> None:
        super().__init__(serde=serde)
        if isinstance(client, MemoryClient):
            client, async_client = None, client
        if client is None and async_client is None:
            raise TypeError("MemorydSaver needs a SyncMemoryClient or a MemoryClient")
        if not root.endswith("."):
            raise ValueError(f"root must end with '.', got {root!r}")
        self.client = client
        self.async_client = async_client
        self.root = root

    # -- running a program on either client ------------------------------------------------
    def _sync(self, program: Program[Any]) -> Any:
        if self.client is None:  # a MemoryClient alone: as LangGraph's async savers
            try:
                asyncio.get_running_loop()
            except RuntimeError:
                return asyncio.run(self._async(program))  # the client opens a channel for this loop
            raise asyncio.InvalidStateError(
                "MemorydSaver has only a MemoryClient: in the event loop's thread use the async methods"
                " (aput, aget_tuple, ...); the sync ones work from other threads"
            )
        return frameworks.run(self.client, program)

    async def _async(self, program: Program[Any]) -> Any:
        if self.async_client is None:
            return await asyncio.to_thread(self._sync, program)
        return await frameworks.run_async(self.async_client, program)

    # -- BaseCheckpointSaver -----------------------------------------------------------------
    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return self._sync(self._get_tuple(config))

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await self._async(self._get_tuple(config))

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        yield from self._sync(self._list(config, filter, before, limit))

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        for item in await self._async(self._list(config, filter, before, limit)):
            yield item

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return self._sync(self._put(config, checkpoint, metadata, new_versions))

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return await self._async(self._put(config, checkpoint, metadata, new_versions))

    def put_writes(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        self._sync(self._put_writes(config, writes, task_id, task_path))

    async def aput_writes(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        await self._async(self._put_writes(config, writes, task_id, task_path))

    def delete_thread(self, thread_id: str) -> None:
        self._sync(self._delete_thread(thread_id))

    async def adelete_thread(self, thread_id: str) -> None:
        await self._async(self._delete_thread(thread_id))

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        self._sync(self._copy_thread(source_thread_id, target_thread_id))

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await self._async(self._copy_thread(source_thread_id, target_thread_id))

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        self._sync(self._delete_for_runs(run_ids))

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        await self._async(self._delete_for_runs(run_ids))

    def get_next_version(self, current: str | None, channel: None) -> str:
        """InMemorySaver's versions: a counter, then a random part (ordered as strings)."""
        if current is None:
            number = 0
        elif isinstance(current, int):
            number = current
        else:
            number = int(current.split(".")[0])
        return f"{number + 1:032}.{random.random():016}"

    # -- namespaces ----------------------------------------------------------------------------
    def _thread(self, thread_id: str) -> str:
        return self.root + _name(thread_id) + "."

    def _checkpoints(self, thread_id: str, ns: str) -> str:
        return self._thread(thread_id) + "c." + _name(ns)

    def _blobs(self, thread_id: str, ns: str) -> str:
        return self._thread(thread_id) + "b." + _name(ns)

    def _writes(self, thread_id: str, ns: str, checkpoint_id: str) -> str:
        return self._thread(thread_id) + "w." + _name(ns) + "." + checkpoint_id

    # -- programs ------------------------------------------------------------------------------
    def _put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> Program[RunnableConfig]:
        configurable = config["configurable"]
        thread_id, ns = configurable["thread_id"], configurable.get("checkpoint_ns", "")
        stored = dict(checkpoint)
        values: dict[str, Any] = stored.pop("channel_values")  # type: ignore[assignment]
        for channel, version in new_versions.items():
            blob = _typed(self.serde.dumps_typed(values[channel])) if channel in values else ["empty", ""]
            yield rpc.save_metadata(self._blobs(thread_id, ns), f"{_name(channel)}.{version}", {"value": blob})
        record = {
            "thread_id": thread_id,
            "checkpoint_ns": ns,
            "checkpoint_id": checkpoint["id"],
            "parent": configurable.get("checkpoint_id") or "",
            "checkpoint": _typed(self.serde.dumps_typed(stored)),
            "metadata": _typed(self.serde.dumps_typed(get_checkpoint_metadata(config, metadata))),
        }
        yield rpc.save_metadata(self._checkpoints(thread_id, ns), checkpoint["id"], record)
        latest = yield rpc.get_metadata(self._thread(thread_id) + "l", _name(ns))
        if latest is None or latest.data.fields["id"].string_value < checkpoint["id"]:
            yield rpc.save_metadata(self._thread(thread_id) + "l", _name(ns), {"id": checkpoint["id"]})
        return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": checkpoint["id"]}}

    def _put_writes(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str
    ) -> Program[None]:
        configurable = config["configurable"]
        thread_id, ns = configurable["thread_id"], configurable.get("checkpoint_ns", "")
        namespace = self._writes(thread_id, ns, configurable["checkpoint_id"])
        for position, (channel, value) in enumerate(writes):
            idx = WRITES_IDX_MAP.get(channel, position)
            key = f"{_name(task_id)}.{idx}"
            # As LangGraph's savers: a task's regular writes are kept once (a retried task
            # writes them again); special ones (errors, interrupts, ...) are replaced.
            if idx >= 0 and (yield rpc.get_metadata(namespace, key)) is not None:
                continue
            data = {
                "task_id": task_id,
                "channel": channel,
                "idx": idx,
                "task_path": task_path,
                "value": _typed(self.serde.dumps_typed(value)),
            }
            yield rpc.save_metadata(namespace, key, data)
        return None

    def _get_tuple(self, config: RunnableConfig) -> Program[CheckpointTuple | None]:
        configurable = config["configurable"]
        thread_id, ns = configurable["thread_id"], configurable.get("checkpoint_ns", "")
        checkpoint_id = get_checkpoint_id(config)
        if not checkpoint_id:
            latest = yield rpc.get_metadata(self._thread(thread_id) + "l", _name(ns))
            if latest is None:
                return None
            checkpoint_id = latest.data.fields["id"].string_value
            config = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": checkpoint_id}}
        record = yield rpc.get_metadata(self._checkpoints(thread_id, ns), checkpoint_id)
        if record is None:
            return None
        return (yield from self._tuple(record, config))

    def _tuple(
        self, record: metadata_service_pb2.MetadataEntry, config: RunnableConfig | None
    ) -> Program[CheckpointTuple]:
        fields = record.data.fields
        thread_id, ns = fields["thread_id"].string_value, fields["checkpoint_ns"].string_value
        checkpoint_id, parent = fields["checkpoint_id"].string_value, fields["parent"].string_value
        checkpoint: Checkpoint = self.serde.loads_typed(_untyped(fields["checkpoint"]))
        values: dict[str, Any] = {}
        for channel, version in checkpoint["channel_versions"].items():
            blob = yield rpc.get_metadata(self._blobs(thread_id, ns), f"{_name(channel)}.{version}")
            if blob is not None:
                kind, data = _untyped(blob.data.fields["value"])
                if kind != "empty":
                    values[channel] = self.serde.loads_typed((kind, data))
        namespace = self._writes(thread_id, ns, checkpoint_id)
        writes = yield from every("list_metadata", "entries", namespace, page_size=1000)
        pending = sorted(
            (json_format.MessageToDict(w.data) for w in writes),
            key=lambda w: writes_sort_key(w["task_path"], w["task_id"], int(w["idx"])),
        )
        here = {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": checkpoint_id}
        return CheckpointTuple(
            config=config or {"configurable": here},
            checkpoint={**checkpoint, "channel_values": values},
            metadata=self.serde.loads_typed(_untyped(fields["metadata"])),
            parent_config={"configurable": {**here, "checkpoint_id": parent}} if parent else None,
            pending_writes=[
                (w["task_id"], w["channel"], self.serde.loads_typed((w["value"][0], base64.b64decode(w["value"][1]))))
                for w in pending
            ],
        )

    def _list(
        self,
        config: RunnableConfig | None,
        filter: dict[str, Any] | None,
        before: RunnableConfig | None,
        limit: int | None,
    ) -> Program[builtins.list[CheckpointTuple]]:
        configurable = (config or {}).get("configurable", {})
        wanted_id = get_checkpoint_id(config) if config else None
        before_id = get_checkpoint_id(before) if before else None
        if "thread_id" in configurable:
            prefix = self._thread(configurable["thread_id"])
        else:
            prefix = self.root
        namespaces = yield from every("list_namespaces", "namespaces", prefix, page_size=1000)
        if configurable.get("checkpoint_ns") is not None and "thread_id" in configurable:
            own = self._checkpoints(configurable["thread_id"], configurable["checkpoint_ns"])
            namespaces = [n for n in namespaces if n == own]
        else:  # the checkpoint namespaces: "<thread>.c.<ns>", by their own labels
            namespaces = [n for n in namespaces if n[len(self.root) :].split(".")[1:2] == ["c"]]
        found: builtins.list[CheckpointTuple] = []
        for namespace in namespaces:
            records = yield from every("list_metadata", "entries", namespace, page_size=1000)
            for record in sorted(records, key=lambda r: r.key, reverse=True):
                if limit is not None and len(found) >= limit:
                    return found
                if (wanted_id and record.key != wanted_id) or (before_id and record.key >= before_id):
                    continue
                metadata = self.serde.loads_typed(_untyped(record.data.fields["metadata"]))
                if filter and not all(metadata.get(k) == v for k, v in filter.items()):
                    continue
                found.append((yield from self._tuple(record, None)))
        return found

    def _copy_thread(self, source: str, target: str) -> Program[None]:
        """Every record of the source thread, under the target's namespaces: its whole parent
        chain, channel values and pending writes (the checkpoints name the target thread)."""
        prefix, into = self._thread(source), self._thread(target)
        for namespace in (yield from every("list_namespaces", "namespaces", prefix, page_size=1000)):
            for record in (yield from every("list_metadata", "entries", namespace, page_size=1000)):
                data = json_format.MessageToDict(record.data)
                if "thread_id" in data and "checkpoint" in data:
                    data["thread_id"] = target
                yield rpc.save_metadata(into + namespace[len(prefix) :], record.key, data)
        return None

    def _delete_for_runs(self, run_ids: Sequence[str]) -> Program[None]:
        """The checkpoints whose metadata names one of the runs, with their pending writes, in
        every thread and namespace; each namespace's newest id then names what is left."""
        wanted = set(run_ids)
        if not wanted:
            return None
        for namespace in (yield from every("list_namespaces", "namespaces", self.root, page_size=1000)):
            labels = namespace[len(self.root) :].split(".")
            if labels[1:2] != ["c"]:
                continue
            records = yield from every("list_metadata", "entries", namespace, page_size=1000)
            gone = set()
            for record in records:
                metadata = self.serde.loads_typed(_untyped(record.data.fields["metadata"]))
                if metadata.get("run_id") in wanted:
                    fields = record.data.fields
                    thread_id, ns = fields["thread_id"].string_value, fields["checkpoint_ns"].string_value
                    yield rpc.delete_metadata(namespace, record.key)
                    writes = self._writes(thread_id, ns, record.key)
                    for write in (yield from every("list_metadata", "entries", writes, page_size=1000)):
                        yield rpc.delete_metadata(writes, write.key)
                    gone.add(record.key)
            if gone:
                thread_ns = self.root + labels[0] + ".l"
                left = [r.key for r in records if r.key not in gone]
                if left:
                    yield rpc.save_metadata(thread_ns, labels[2], {"id": max(left)})
                else:
                    yield rpc.delete_metadata(thread_ns, labels[2])
        return None

    def _delete_thread(self, thread_id: str) -> Program[None]:
        namespaces = yield from every("list_namespaces", "namespaces", self._thread(thread_id), page_size=1000)
        for namespace in namespaces:
            for record in (yield from every("list_metadata", "entries", namespace, page_size=1000)):
                yield rpc.delete_metadata(namespace, record.key)
        return None


__all__ = ["DEFAULT_ROOT", "MemorydSaver"]
