"""A Python worker's connection to its JVM, acknowledged as soon as a task's function is
read.

Spark writes a Python task its function, then the task's input, on a TCP connection of the
machine's loopback, without ``TCP_NODELAY``. Until the worker acknowledges the function's
last bytes the kernel holds the input back (Nagle's algorithm), and the worker delays that
acknowledgement by up to 40 ms when the bytes were less than a full segment (64 KiB on the
loopback): a task sat idle for it before reading anything. Padding each function past a
segment, as pqsift did, left the wait in some tasks: those whose function's last bytes
reached the worker apart from the rest.

The worker unpickles a task's function after reading all of it and before reading the
input. :class:`AcknowledgeOnLoad`, pickled into every function pqsift hands Spark (and the
data source's reader), runs :func:`acknowledge_jvm_connection` then: ``TCP_QUICKACK`` makes
the kernel acknowledge what has been read at once, which releases the input, and
``TCP_NODELAY`` sends the worker's own small writes (the last frames of a task's output)
without waiting for the JVM's acknowledgements either.

Only in Spark's Python workers: a function unpickled elsewhere (a driver, a process of the
user's own) leaves that process's connections as they are. Spark's
``spark.python.unix.domain.socket.enabled=true`` (Unix domain sockets instead of TCP) has
no such wait; on systems without ``TCP_QUICKACK`` (it is Linux's) nothing is done.

>>> import pickle
>>> type(pickle.loads(pickle.dumps(AcknowledgeOnLoad()))).__name__   # acknowledged when loaded
'AcknowledgeOnLoad'
"""

from __future__ import annotations

import ipaddress
import os
import socket
import stat

from pqsift.spark.worker_gc import in_a_spark_worker

__all__ = ["AcknowledgeOnLoad", "acknowledge_jvm_connection"]

#: Where Linux lists the process's open file descriptors.
_OPEN_FILES = "/proc/self/fd"


def acknowledge_jvm_connection() -> int:
    """Sets ``TCP_QUICKACK`` and ``TCP_NODELAY`` on this process's TCP connections to the
    loopback (a Python worker's to its JVM), and returns how many there were. Anything
    that is not such a connection, or that closes meanwhile, is left alone; where the
    system has no ``TCP_QUICKACK`` or no ``/proc``, nothing is done (0)."""
    quick_ack = getattr(socket, "TCP_QUICKACK", None)
    if quick_ack is None:
        return 0
    try:
        descriptors = os.listdir(_OPEN_FILES)
    except OSError:
        return 0
    acknowledged = 0
    for name in descriptors:
        try:
            descriptor = int(name)
            if not stat.S_ISSOCK(os.fstat(descriptor).st_mode):
                continue
            # A duplicate, closed here: the worker's own descriptor stays as it is.
            with socket.socket(fileno=os.dup(descriptor)) as connection:
                if connection.type != socket.SOCK_STREAM or connection.family not in (socket.AF_INET, socket.AF_INET6):
                    continue
                peer = ipaddress.ip_address(connection.getpeername()[0])
                if isinstance(peer, ipaddress.IPv6Address) and peer.ipv4_mapped is not None:
                    peer = peer.ipv4_mapped
                if not peer.is_loopback:
                    continue
                connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                connection.setsockopt(socket.IPPROTO_TCP, quick_ack, 1)
                acknowledged += 1
        except (OSError, ValueError):
            # Closed since it was listed, not connected (a listening socket), or not an
            # address of the internet families: not a connection to the JVM.
            continue
    return acknowledged


class AcknowledgeOnLoad:
    """Pickled inside a task's function: unpickled in a Spark worker, it acknowledges the
    JVM's connection (:func:`acknowledge_jvm_connection`); anywhere, it is itself again."""

    def __reduce__(self) -> tuple[object, tuple[()]]:
        return (_loaded, ())


def _loaded() -> AcknowledgeOnLoad:
    if in_a_spark_worker():
        acknowledge_jvm_connection()
    return AcknowledgeOnLoad()
