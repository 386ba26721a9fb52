"""Google ADK session and memory services on memoryd (`pip install 'memoryd-client[adk]'`).

    from google.adk.runners import Runner
    from memoryd_client import MemoryClient
    from memoryd_client.adk import MemorydMemoryService, MemorydSessionService

    async with MemoryClient("127.0.0.1:50051") as client:
        runner = Runner(app_name="travel", agent=agent, session_service=MemorydSessionService(client),
                        memory_service=MemorydMemoryService(client))

Sessions (`MemorydSessionService`, a `BaseSessionService`): an ADK session (app, user, id)
is the memoryd session "adk/<app>/<user>/<id>" (each part percent-encoded), owned by
user_id=<user>, agent_id=<app>. Each event is one memoryd message: the event's JSON form
(ADK's own, as its SQLite service stores it) in metadata["adk"], so get_session returns the
very events appended, in order; for other memoryd clients its role (user, assistant, or
tool for function responses), its text, function calls as tool calls, thoughts as
reasoning. State is kept as ADK's own services keep it: the session's record (metadata
namespace "adk.sessions/<app>/<user>", key the memoryd session id) holds the session-scoped
state and the last update time; "app:" keys are records of "adk.app-state/<app>", "user:"
keys of "adk.user-state/<app>/<user>", one record per key; "temp:" keys are never stored.

Memory (`MemorydMemoryService`, a `BaseMemoryService`): a session added to memory is copied
into the memoryd session "adk-memory/<app>/<user>/<id>" (replacing an earlier copy), its
messages tagged with the platform "adk-memory/<app>/<user>"; search_memory is memoryd's
recall (SearchMemory, keywords, and meaning with a server embedder) over that platform.
"""

from __future__ import annotations

import json
import re
import uuid
from datetime import datetime
from typing import Any
from urllib.parse import quote

from google.adk.errors import StaleSessionError
from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.errors.session_not_found_error import SessionNotFoundError
from google.adk.events.event import Event
from google.adk.memory.base_memory_service import BaseMemoryService, SearchMemoryResponse
from google.adk.memory.memory_entry import MemoryEntry
from google.adk.sessions import _session_util
from google.adk.sessions.base_session_service import BaseSessionService, GetSessionConfig, ListSessionsResponse
from google.adk.sessions.session import Session
from google.adk.sessions.state import State
from google.genai import types
from typing_extensions import override

from memoryd.v1 import memory_service_pb2, message_pb2, metadata_service_pb2, vector_service_pb2

from . import frameworks
from .client import MemoryClient
from .messages import message as new_message
from .messages import session_attributes, tool_call

FORM_KEY = "adk"
_CLEAR_EVERYTHING = [
    memory_service_pb2.CLEAR_TARGET_MESSAGES,
    memory_service_pb2.CLEAR_TARGET_VECTORS,
    memory_service_pb2.CLEAR_TARGET_METADATA,  # the session's record (keyed by its id) and attributes
]


_WORD = re.compile(r"\w+")


def _part(text: str) -> str:
    return quote(text, safe="")


def to_memoryd(event: Event, *, platform: str = "") -> message_pb2.Message:
    """An ADK event as a memoryd message (its JSON form in metadata["adk"])."""
    parts = (event.content.parts or []) if event.content else []
    calls = [p.function_call for p in parts if p.function_call]
    answers = [p.function_response for p in parts if p.function_response]
    text = "\n".join(p.text for p in parts if p.text and not p.thought)
    role = "tool" if answers else "user" if event.author == "user" else "assistant"
    metadata: dict[str, Any] = frameworks.pack(FORM_KEY, event.model_dump(mode="json", exclude_none=True), text)
    if platform:
        metadata["platform"] = platform
    return new_message(
        role,
        text,
        timestamp=max(int(event.timestamp * 1000), 0),
        metadata=metadata,
        tool_calls=[tool_call(c.id or "", c.name or "", json.dumps(c.args or {})) for c in calls],
        tool_call_id=answers[0].id or "" if answers else "",
        reasoning_content="\n".join(p.text for p in parts if p.text and p.thought),
    )


def from_memoryd(message: message_pb2.Message) -> Event | None:
    """The event saved as `message`; None for messages other clients wrote."""
    form = frameworks.unpack(FORM_KEY, message)
    return Event.model_validate(form) if form is not None else None


class MemorydSessionService(BaseSessionService):
    """ADK sessions, events and state in memoryd.

    Args:
        client: a MemoryClient (ADK's session service methods are async).
        prefix: the first part of every memoryd session id and metadata namespace this
            service writes ("adk" by default): two services with different prefixes never
            see each other's sessions.

    Contract (ADK's, as its InMemory and SQLite services keep it): create_session refuses an
    id the (app, user) already has (AlreadyExistsError); get_session returns the events
    oldest first (GetSessionConfig: the newest `num_recent_events`, those at or after
    `after_timestamp`) and the state merged with the app's and the user's (prefixed "app:"
    and "user:"); list_sessions returns them without events, oldest update first;
    append_event refuses a session another writer has appended to since it was read
    (StaleSessionError), stores the event without its "temp:" keys and applies its state
    delta; delete_session removes the session, its events and its record.
    """

    def __init__(self, client: MemoryClient, *, prefix: str = "adk") -> None:
        self.client = client
        self.prefix = prefix

    # -- names -------------------------------------------------------------------------------
    def session_id(self, app_name: str, user_id: str, session_id: str) -> str:
        """The memoryd session holding an ADK session's events."""
        return f"{self.prefix}/{_part(app_name)}/{_part(user_id)}/{_part(session_id)}"

    def _sessions_namespace(self, app_name: str, user_id: str | None = None) -> str:
        base = f"{self.prefix}.sessions/{_part(app_name)}/"
        return base if user_id is None else base + _part(user_id)

    def _app_namespace(self, app_name: str) -> str:
        return f"{self.prefix}.app-state/{_part(app_name)}"

    def _user_namespace(self, app_name: str, user_id: str) -> str:
        return f"{self.prefix}.user-state/{_part(app_name)}/{_part(user_id)}"

    # -- BaseSessionService ------------------------------------------------------------------
    @override
    async def create_session(
        self, *, app_name: str, user_id: str, state: dict[str, Any] | None = None, session_id: str | None = None
    ) -> Session:
        session_id = (session_id.strip() if session_id else None) or str(uuid.uuid4())
        memoryd_id = self.session_id(app_name, user_id, session_id)
        namespace = self._sessions_namespace(app_name, user_id)
        if await self.client.get_metadata(namespace, memoryd_id) is not None:
            raise AlreadyExistsError(f"Session with id {session_id} already exists.")
        deltas = _session_util.extract_state_delta(_session_util.make_json_safe_state(state or {}))
        await self._save_scoped_state(app_name, user_id, deltas)
        now = datetime.now().timestamp()
        await self.client.update_session(memoryd_id, session_attributes(user_id=user_id, agent_id=app_name))
        await self.client.save_metadata(
            namespace, memoryd_id, _record(app_name, user_id, session_id, deltas["session"], now, now)
        )
        session = Session(
            app_name=app_name, user_id=user_id, id=session_id, state=deltas["session"], last_update_time=now
        )
        return await self._merged(session)

    @override
    async def get_session(
        self, *, app_name: str, user_id: str, session_id: str, config: GetSessionConfig | None = None
    ) -> Session | None:
        session_id = session_id.strip() if session_id else session_id
        memoryd_id = self.session_id(app_name, user_id, session_id)
        record = await self.client.get_metadata(self._sessions_namespace(app_name, user_id), memoryd_id)
        if record is None:
            return None
        limit = config.num_recent_events if config is not None else None
        if limit == 0:
            messages = []
        else:
            messages = await frameworks.history_async(self.client, memoryd_id, limit)
        events = [e for e in map(from_memoryd, messages) if e is not None]
        if config is not None and config.after_timestamp is not None:
            events = [e for e in events if e.timestamp >= config.after_timestamp]
        session = _session(record)
        session.events = events
        return await self._merged(session)

    @override
    async def list_sessions(self, *, app_name: str, user_id: str | None = None) -> ListSessionsResponse:
        if user_id is None:
            listing = {"namespace_prefix": self._sessions_namespace(app_name)}
        else:
            listing = {"namespace": self._sessions_namespace(app_name, user_id)}
        records = [r async for r in self.client.iter_metadata(page_size=1000, **listing)]
        app_state = await self._state(self._app_namespace(app_name))
        user_states: dict[str, dict[str, Any]] = {}
        sessions = []
        for record in records:
            session = _session(record)
            if session.user_id not in user_states:
                user_states[session.user_id] = await self._state(self._user_namespace(app_name, session.user_id))
            sessions.append(_with_scoped_state(session, app_state, user_states[session.user_id]))
        sessions.sort(key=lambda s: (s.last_update_time, s.user_id, s.id))
        return ListSessionsResponse(sessions=sessions)

    @override
    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        session_id = session_id.strip() if session_id else session_id
        await self.client.clear_session(self.session_id(app_name, user_id, session_id), _CLEAR_EVERYTHING)

    @override
    async def get_user_state(self, *, app_name: str, user_id: str) -> dict[str, Any]:
        return await self._state(self._user_namespace(app_name, user_id))

    @override
    async def append_event(self, session: Session, event: Event) -> Event:
        if event.partial:
            return event
        memoryd_id = self.session_id(session.app_name, session.user_id, session.id)
        namespace = self._sessions_namespace(session.app_name, session.user_id)
        record = await self.client.get_metadata(namespace, memoryd_id)
        if record is None:
            raise SessionNotFoundError(f"Session {session.id} not found.")
        stored = _session(record)
        if stored.last_update_time > session.last_update_time:
            # ADK 2.15's words: DatabaseSessionService's, then SqliteSessionService's.
            raise StaleSessionError(
                "The session has been modified in storage since it was loaded."
                " Please reload the session before appending more events."
                " The last_update_time provided in the session object is earlier than the update_time in storage."
                " Please check if it is a stale session."
            )
        # ADK's own steps: temp: keys reach the in-memory session only, never storage.
        self._apply_temp_state(session, event)
        event = self._trim_temp_delta_state(event)
        deltas = _session_util.extract_state_delta(
            _session_util.make_json_safe_state(event.actions.state_delta if event.actions else {})
        )
        # The event first (its id is the idempotency key: a retried append stores it once),
        # then the shared state, then the session's record (state and update time).
        await self.client.save_message(
            memoryd_id,
            to_memoryd(event),
            idempotency_key=f"adk-event:{event.id}",
            attributes=session_attributes(user_id=session.user_id, agent_id=session.app_name),
        )
        await self._save_scoped_state(session.app_name, session.user_id, deltas)
        state = {**stored.state, **deltas["session"]}
        await self.client.save_metadata(
            namespace,
            memoryd_id,
            _record(
                session.app_name,
                session.user_id,
                session.id,
                state,
                record.data.fields["create_time"].number_value,
                event.timestamp,
            ),
        )
        session.last_update_time = event.timestamp
        return self._commit_event_to_session(session, event)

    # -- helpers -----------------------------------------------------------------------------
    async def _save_scoped_state(self, app_name: str, user_id: str, deltas: dict[str, dict[str, Any]]) -> None:
        """One record per app:/user: key: concurrent sessions writing other keys never collide."""
        for namespace, delta in (
            (self._app_namespace(app_name), deltas["app"]),
            (self._user_namespace(app_name, user_id), deltas["user"]),
        ):
            for key, value in delta.items():
                await self.client.save_metadata(namespace, key, {"value": _json(value)})

    async def _state(self, namespace: str) -> dict[str, Any]:
        return {
            r.key: json.loads(r.data.fields["value"].string_value)
            async for r in self.client.iter_metadata(namespace, page_size=1000)
        }

    async def _merged(self, session: Session) -> Session:
        app_state = await self._state(self._app_namespace(session.app_name))
        user_state = await self._state(self._user_namespace(session.app_name, session.user_id))
        return _with_scoped_state(session, app_state, user_state)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _record(
    app_name: str, user_id: str, session_id: str, state: dict[str, Any], create_time: float, update_time: float
) -> dict[str, Any]:
    """A session's record: its session-scoped state (JSON text: exact) and its times (seconds)."""
    return {
        "app_name": app_name,
        "user_id": user_id,
        "session_id": session_id,
        "state": _json(state),
        "create_time": create_time,
        "update_time": update_time,
    }


def _session(record: metadata_service_pb2.MetadataEntry) -> Session:
    fields = record.data.fields
    return Session(
        app_name=fields["app_name"].string_value,
        user_id=fields["user_id"].string_value,
        id=fields["session_id"].string_value,
        state=json.loads(fields["state"].string_value),
        last_update_time=fields["update_time"].number_value,
    )


def _with_scoped_state(session: Session, app_state: dict[str, Any], user_state: dict[str, Any]) -> Session:
    for key, value in app_state.items():
        session.state[State.APP_PREFIX + key] = value
    for key, value in user_state.items():
        session.state[State.USER_PREFIX + key] = value
    return session


class MemorydMemoryService(BaseMemoryService):
    """ADK memory in memoryd: sessions added to memory, searched with memoryd's recall.

    Args:
        client: a MemoryClient.
        prefix: the first part of the memory sessions' ids and platform ("adk-memory").
        top_k: memories a search returns at most (1 to 100; ADK's InMemory service: 10).
        formed_facts: also return the facts memoryd formed about the user (memory formation
            on, docs/MEMORY.md): the memory sessions are owned by the ADK user id (so a
            token bound to an end user must be that user's), and a search returns first the
            user's current facts sharing a word with the query (of the newest 100; at most
            top_k; author "memoryd", custom_metadata "memoryd_fact" with the source message
            ids), then the recalled events. Facts form in the background: a fact of what
            was just added appears once formation has processed it.

    add_session_to_memory copies a session's events that have content (replacing an
    earlier copy of the same session: ReplaceHistory); add_events_to_memory appends events
    (an event id already added is not added twice); search_memory returns the events
    recall finds for the query among the (app, user)'s memories, best first, each as ADK's
    MemoryEntry (id: the event's id, its content and author, its time in ISO 8601).
    Recall indexes what is added in the background; a search waits (wait_for_event_seq) until
    the index holds what this service added for the (app, user), so it finds it at once.
    """

    def __init__(
        self, client: MemoryClient, *, prefix: str = "adk-memory", top_k: int = 10, formed_facts: bool = False
    ) -> None:
        self.client = client
        self.prefix = prefix
        self.top_k = top_k
        self.formed_facts = formed_facts
        self._written: dict[str, int] = {}  # platform -> event_seq of the newest write added

    def _wrote(self, platform: str, event_seq: int) -> None:
        self._written[platform] = max(self._written.get(platform, 0), event_seq)

    def _platform(self, app_name: str, user_id: str) -> str:
        return f"{self.prefix}/{_part(app_name)}/{_part(user_id)}"

    def _session_id(self, app_name: str, user_id: str, session_id: str) -> str:
        return f"{self._platform(app_name, user_id)}/{_part(session_id)}"

    @override
    async def add_session_to_memory(self, session: Session) -> None:
        platform = self._platform(session.app_name, session.user_id)
        events = [to_memoryd(e, platform=platform) for e in session.events if e.content and e.content.parts]
        memoryd_id = self._session_id(session.app_name, session.user_id, session.id)
        if self.formed_facts:  # the facts formed from it are the user's
            await self.client.update_session(memoryd_id, session_attributes(session.user_id))
        response = await self.client.replace_history(memoryd_id, events)
        self._wrote(platform, response.event_seq)

    @override
    async def add_events_to_memory(
        self,
        *,
        app_name: str,
        user_id: str,
        events: Any,
        session_id: str | None = None,
        custom_metadata: Any = None,
    ) -> None:
        platform = self._platform(app_name, user_id)
        memoryd_id = self._session_id(app_name, user_id, session_id or "__unknown_session_id__")
        for event in events:
            if event.content and event.content.parts:
                response = await self.client.save_message(
                    memoryd_id,
                    to_memoryd(event, platform=platform),
                    idempotency_key=f"adk-memory:{event.id}",
                    attributes=session_attributes(user_id) if self.formed_facts else None,
                )
                self._wrote(platform, response.event_seq)

    @override
    async def search_memory(self, *, app_name: str, user_id: str, query: str) -> SearchMemoryResponse:
        found = await self.client.search_memory(
            query_text=query,
            scope=vector_service_pb2.RECALL_SCOPE_PLATFORM,
            platform=self._platform(app_name, user_id),
            top_k=self.top_k,
            context_window=0,
            keep_repeated_texts=True,  # two events with the same words are two memories, as in ADK
            wait_for_event_seq=self._written.get(self._platform(app_name, user_id), 0),
        )
        memories = await self._facts(user_id, query) if self.formed_facts else []
        for hit in found.hits:
            event = await self._event(hit)
            if event is not None and event.content is not None:
                memories.append(
                    MemoryEntry(
                        id=event.id,
                        content=event.content,
                        author=event.author,
                        timestamp=datetime.fromtimestamp(event.timestamp).isoformat(),
                    )
                )
        return SearchMemoryResponse(memories=memories)

    async def _facts(self, user_id: str, query: str) -> list[MemoryEntry]:
        """The user's current formed facts (the newest 100) sharing a word with `query`."""
        words = set(_WORD.findall(query.lower()))
        entries = []
        for fact in (await self.client.list_facts(user_id, page_size=100)).facts:
            if words & set(_WORD.findall(" ".join([fact.text, *fact.keywords]).lower())):
                entries.append(
                    MemoryEntry(
                        id=fact.id,
                        content=types.Content(role="user", parts=[types.Part(text=fact.text)]),
                        author="memoryd",
                        timestamp=datetime.fromtimestamp(fact.update_time / 1000).isoformat(),
                        custom_metadata={"memoryd_fact": True, "sources": [s.message_id for s in fact.sources]},
                    )
                )
        return entries[: self.top_k]

    async def _event(self, hit: vector_service_pb2.MemoryHit) -> Event | None:
        """The event a hit is: its message, read back whole (a hit carries only its text)."""
        page = await self.client.list_messages_in_range(hit.session_id, hit.timestamp, hit.timestamp)
        for message in page.messages:
            if message.id == hit.message_id:
                return from_memoryd(message)
        return None


__all__ = ["MemorydMemoryService", "MemorydSessionService", "from_memoryd", "to_memoryd"]
