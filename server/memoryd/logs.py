"""Logging configuration: every stderr line is one JSON object. Configured only at the entry point.

structlog's stdlib integration: structlog loggers (`structlog.get_logger(name)`) and plain
stdlib loggers (`logging.getLogger(__name__)`, libraries, `warnings`) all end in one
stdlib handler whose ProcessorFormatter renders JSON with `timestamp`, `level`, `logger`,
`event`, the structlog key-values or the stdlib record's `extra=` fields, and `exception`
(a traceback) when there is one.

gRPC's C core writes its own lines to stderr, outside Python; `GRPC_VERBOSITY` defaults to
NONE here so that it does not (memoryd logs the failures it sees itself). An operator who
sets GRPC_VERBOSITY gets those lines back, in gRPC's own format.

Message text, tokens and other personal data are never logged above debug level.
"""

from __future__ import annotations

import logging
import os
import sys
import threading

import structlog

_SHARED: list[structlog.typing.Processor] = [
    structlog.contextvars.merge_contextvars,
    structlog.stdlib.add_log_level,
    structlog.stdlib.add_logger_name,
    structlog.processors.TimeStamper(fmt="iso", utc=True),
]


def level_number(level: str) -> int:
    numeric = logging.getLevelName(level.upper())
    return numeric if isinstance(numeric, int) else logging.INFO


def json_handler(stream=None) -> logging.Handler:
    """A stdlib handler writing one JSON object per record."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            # Records from stdlib loggers: level, logger name, time and their `extra=` fields.
            foreign_pre_chain=[*_SHARED, structlog.stdlib.ExtraAdder()],
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.processors.format_exc_info,
                structlog.processors.JSONRenderer(),
            ],
        )
    )
    return handler


def _log_uncaught(exc_type, exc, traceback) -> None:
    if issubclass(exc_type, KeyboardInterrupt):
        return
    logging.getLogger("memoryd").critical("uncaught_exception", exc_info=(exc_type, exc, traceback))


def configure(level: str = "info") -> None:
    # Read when the gRPC core initializes: memoryd.cli configures logging before it serves.
    os.environ.setdefault("GRPC_VERBOSITY", "NONE")
    numeric = level_number(level)
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(json_handler())
    root.setLevel(numeric)
    logging.captureWarnings(True)  # warnings.warn(...) becomes a JSON record of logger py.warnings
    # An exception nothing caught (a crash at startup, in a thread) is a JSON record too,
    # not Python's plain traceback.
    sys.excepthook = _log_uncaught
    threading.excepthook = lambda args: _log_uncaught(args.exc_type, args.exc_value, args.exc_traceback)
    structlog.configure(
        processors=[*_SHARED, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        # Filters below `level` before any processor runs: a debug call costs almost nothing.
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.stdlib.LoggerFactory(),
        cache_logger_on_first_use=True,
    )
