"""ProtoJSON on the HTTP port: strict when reading a request, readable when answering.

Reading follows what the ProtoJSON spec asks of parsers by default: a key that names no
field, an enum name that is not one of the enum's (names are case-sensitive) and a field
given twice (`session_id` and `sessionId`, or a key repeated) are refused, never dropped,
so a request never runs with less than it said (an empty `targets` list would clear every
message). Fields are accepted by their proto name or their lowerCamelCase JSON name, enums
by name or by number (an unknown number reaches the servicers' validation, as over gRPC).

protobuf's own parser (`json_format.ParseDict`, unknown fields refused) builds the message.
Before it runs, one walk of the JSON along the request's descriptor looks for what that
parser would let through (numbers truncated into enums, a field under both its names) and
the structure it would trip over. When either refuses, the walk runs again with the parser
as the judge of each leaf value on its own, to name every field at fault. Each problem is
a FieldViolation with the field path as validation.py writes it (`messages[0].role`) and a
fixed sentence about the field: never the parser's own text.

Answers use the proto field names (snake_case, as every request in the docs does) and
keep UTF-8 text as it is.
"""

from __future__ import annotations

import functools
import json
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any, cast

from google.protobuf import json_format, message_factory
from google.protobuf.descriptor import Descriptor, EnumDescriptor, FieldDescriptor
from google.protobuf.message import Message

from memoryd.domain.errors import FieldViolation, InvalidArgument

BODY = "body"
# An unknown key is echoed in the field path; a longer one is cut here.
MAX_ECHOED_KEY = 100
INT32_RANGE = range(-(2**31), 2**31)

_SCALAR_TYPES = {
    FieldDescriptor.TYPE_DOUBLE: "double",
    FieldDescriptor.TYPE_FLOAT: "float",
    FieldDescriptor.TYPE_BOOL: "bool",
    FieldDescriptor.TYPE_STRING: "string",
    FieldDescriptor.TYPE_BYTES: "bytes",
}
_INTEGER_TYPES = {
    FieldDescriptor.TYPE_INT32: "int32",
    FieldDescriptor.TYPE_SINT32: "int32",
    FieldDescriptor.TYPE_SFIXED32: "int32",
    FieldDescriptor.TYPE_UINT32: "uint32",
    FieldDescriptor.TYPE_FIXED32: "uint32",
    FieldDescriptor.TYPE_INT64: "int64",
    FieldDescriptor.TYPE_SINT64: "int64",
    FieldDescriptor.TYPE_SFIXED64: "int64",
    FieldDescriptor.TYPE_UINT64: "uint64",
    FieldDescriptor.TYPE_FIXED64: "uint64",
}
_SCALAR_SENTENCES = {
    FieldDescriptor.TYPE_DOUBLE: 'must be a number, or "NaN", "Infinity" or "-Infinity" as a string',
    FieldDescriptor.TYPE_FLOAT: 'must be a number within float range, or "NaN", "Infinity" or "-Infinity" as a string',
    FieldDescriptor.TYPE_BOOL: "must be true or false",
    FieldDescriptor.TYPE_STRING: "must be a string of valid Unicode",
    FieldDescriptor.TYPE_BYTES: "must be a base64 string",
}

LeafCheck = Callable[[FieldDescriptor, Any], bool]


def render(message: Message) -> bytes:
    """The JSON of an answer: proto field names, UTF-8 text as is, int64 as strings (ProtoJSON)."""
    text = json_format.MessageToJson(message, preserving_proto_field_name=True, ensure_ascii=False, indent=None)
    return text.encode("utf-8")


def parse(data: bytes, message_class: type[Message]) -> Message:
    """The request `data` holds, or InvalidArgument naming every field it cannot be read from."""
    document = _load(data)
    descriptor = cast(Descriptor, message_class.DESCRIPTOR)  # the C (upb) one has the same API
    if not any(_object(document, descriptor, "", None)):
        message = message_class()
        try:
            json_format.ParseDict(document, message)  # ignore_unknown_fields=False
            return message
        except Exception:  # noqa: BLE001 - ParseError, and the OverflowError or RecursionError it lets out
            pass  # named below
    violations = list(_object(document, descriptor, "", _leaf_parses))
    raise InvalidArgument(violations or [FieldViolation(BODY, f"is not a valid {descriptor.full_name}")])


# -- the JSON text --------------------------------------------------------------------------------
class _Object(dict):
    """A JSON object, with the keys its text repeated (a dict keeps only the last value)."""

    __slots__ = ("repeated",)

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        super().__init__(pairs)
        self.repeated: set[str] = set()
        if len(pairs) != len(self):
            self.repeated = {key for key, count in Counter(key for key, _ in pairs).items() if count > 1}


def _not_json(constant: str) -> None:
    raise ValueError(f"{constant} is not JSON")  # Python's json reads NaN and Infinity; JSON has neither


def _load(data: bytes) -> Any:
    try:
        return json.loads(data.decode("utf-8"), object_pairs_hook=_Object, parse_constant=_not_json)
    except UnicodeDecodeError:
        raise InvalidArgument(FieldViolation(BODY, "is not UTF-8 text")) from None
    except RecursionError:
        raise InvalidArgument(FieldViolation(BODY, "nests JSON arrays or objects too deeply")) from None
    except ValueError:
        raise InvalidArgument(FieldViolation(BODY, "is not valid JSON")) from None


# -- the walk along the descriptor --------------------------------------------------------------------
@functools.cache
def _fields(descriptor: Descriptor) -> dict[str, FieldDescriptor]:
    """Each field by its JSON name and by its proto name (ProtoJSON parsers accept both)."""
    fields = {field.json_name: field for field in descriptor.fields}
    fields.update(descriptor.fields_by_name)
    return fields


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def _echoed(key: str) -> str:
    return key if len(key) <= MAX_ECHOED_KEY else key[:MAX_ECHOED_KEY] + "…"


def _is_plain_message(field: FieldDescriptor) -> bool:
    """A message field the walk goes into: not a map, not a well-known type (Struct has its own JSON)."""
    return (
        field.message_type is not None
        and not field.message_type.GetOptions().map_entry
        and not field.message_type.full_name.startswith("google.protobuf.")
    )


def _object(value: Any, descriptor: Descriptor, prefix: str, leaf_check: LeafCheck | None) -> Iterator[FieldViolation]:
    if not isinstance(value, _Object):
        yield FieldViolation(prefix or BODY, "must be a JSON object")
        return
    fields = _fields(descriptor)
    given: dict[str, str] = {}  # field name -> the key it was given as
    oneofs: set[str] = set()
    for key, item in value.items():
        field = fields.get(key)
        if field is None:
            yield FieldViolation(_join(prefix, _echoed(key)), f"is not a field of {descriptor.full_name}")
            continue
        path = _join(prefix, field.name)
        if key in value.repeated:
            yield FieldViolation(path, "is given more than once")
            continue
        if field.name in given:
            yield FieldViolation(path, f"is given twice, as {given[field.name]} and as {key}")
            continue
        given[field.name] = key
        if item is None:  # ProtoJSON: null is the field's default value
            continue
        oneof = field.containing_oneof
        if oneof is not None:
            if oneof.name in oneofs:
                yield FieldViolation(_join(prefix, oneof.name), "must have at most one of its fields set")
                continue
            oneofs.add(oneof.name)
        yield from _field(field, item, path, leaf_check)


def _field(field: FieldDescriptor, value: Any, path: str, leaf_check: LeafCheck | None) -> Iterator[FieldViolation]:
    if field.message_type is not None and field.message_type.GetOptions().map_entry:
        yield from _map(field, value, path, leaf_check)
    elif field.is_repeated:
        if not isinstance(value, list):
            yield FieldViolation(path, "must be a JSON array")
            return
        for index, element in enumerate(value):
            if element is None:
                yield FieldViolation(f"{path}[{index}]", "must not be null")
            else:
                yield from _single(field, element, f"{path}[{index}]", leaf_check)
    else:
        yield from _single(field, value, path, leaf_check)


def _map(field: FieldDescriptor, value: Any, path: str, leaf_check: LeafCheck | None) -> Iterator[FieldViolation]:
    """A map is named as a whole (validation.py names a label's map too: its keys may be anything)."""
    entry = field.message_type
    assert entry is not None  # a map field: its entry message
    value_field = entry.fields_by_name["value"]
    sentence = f"must be a JSON object of {_type_name(value_field)} values, each key once"
    if not isinstance(value, _Object) or value.repeated:
        yield FieldViolation(path, sentence)
        return
    for key, item in value.items():
        problem = _enum_problem(value_field.enum_type, item) if value_field.enum_type is not None else None
        if item is None or problem or (leaf_check is not None and not leaf_check(field, {key: item})):
            yield FieldViolation(path, sentence)
            return


def _single(field: FieldDescriptor, value: Any, path: str, leaf_check: LeafCheck | None) -> Iterator[FieldViolation]:
    if _is_plain_message(field):
        assert field.message_type is not None
        yield from _object(value, field.message_type, path, leaf_check)
    elif field.enum_type is not None:
        if problem := _enum_problem(field.enum_type, value):
            yield FieldViolation(path, problem)
    elif _repeats_a_key(value):  # a Struct's object: a dict would keep only the key's last value
        yield FieldViolation(path, "holds a JSON object that gives a key more than once")
    elif leaf_check is not None and not leaf_check(field, [value] if field.is_repeated else value):
        yield FieldViolation(path, _sentence(field))


def _enum_problem(enum: EnumDescriptor, value: Any) -> str | None:
    """Why `value` names no value of `enum` in ProtoJSON: a name as written, or an int32 number.
    (json_format would read "1", 1.5 or true as a number: int() of them.)"""
    if isinstance(value, str):
        known = value in enum.values_by_name
    elif isinstance(value, bool):
        known = False
    elif isinstance(value, int):
        known = value in INT32_RANGE
    else:
        known = isinstance(value, float) and value.is_integer() and int(value) in INT32_RANGE
    if known:
        return None
    names = ", ".join(v.name for v in enum.values)
    return f"must be one of {enum.full_name}'s names, as written ({names}), or its number"


def _repeats_a_key(value: Any) -> bool:
    """Whether any JSON object in `value` gave a key twice (walked without recursion: JSON nests deep)."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, _Object):
            if item.repeated:
                return True
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return False


def _type_name(field: FieldDescriptor) -> str:
    if field.enum_type is not None:
        return field.enum_type.full_name
    if field.message_type is not None:
        return field.message_type.full_name
    return _INTEGER_TYPES.get(field.type) or _SCALAR_TYPES[field.type]


def _sentence(field: FieldDescriptor) -> str:
    if (integer := _INTEGER_TYPES.get(field.type)) is not None:
        return f"must be a whole number within {integer}'s range (a JSON number or a string of digits)"
    if field.message_type is not None:
        return f"must be the JSON form of {field.message_type.full_name}"
    return _SCALAR_SENTENCES[field.type]


def _leaf_parses(field: FieldDescriptor, value: Any) -> bool:
    """Whether protobuf's parser reads `value` into `field` on its own (the judge of leaf values)."""
    assert field.containing_type is not None  # a field of a message
    message = message_factory.GetMessageClass(field.containing_type)()
    try:
        json_format.ParseDict({field.name: value}, message)
    except Exception:  # noqa: BLE001 - any refusal of the parser's, named by the caller
        return False
    return True
