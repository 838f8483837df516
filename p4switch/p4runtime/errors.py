"""The one exception the P4Runtime server raises for a bad request."""

from __future__ import annotations

import grpc
from google.rpc import code_pb2


class P4RuntimeError(Exception):
    """A request the server refuses, with the spec's canonical code (google.rpc.Code)."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code
        self.message = message

    @property
    def grpc_code(self) -> grpc.StatusCode:
        return GRPC_CODES[self.code]

    def __str__(self) -> str:
        return f"{code_pb2.Code.Name(self.code)}: {self.message}"


GRPC_CODES: dict[int, grpc.StatusCode] = {sc.value[0]: sc for sc in grpc.StatusCode}


def invalid(message: str) -> P4RuntimeError:
    return P4RuntimeError(code_pb2.INVALID_ARGUMENT, message)


def not_found(message: str) -> P4RuntimeError:
    return P4RuntimeError(code_pb2.NOT_FOUND, message)


def already_exists(message: str) -> P4RuntimeError:
    return P4RuntimeError(code_pb2.ALREADY_EXISTS, message)


def permission_denied(message: str) -> P4RuntimeError:
    return P4RuntimeError(code_pb2.PERMISSION_DENIED, message)


def failed_precondition(message: str) -> P4RuntimeError:
    return P4RuntimeError(code_pb2.FAILED_PRECONDITION, message)


def out_of_range(message: str) -> P4RuntimeError:
    return P4RuntimeError(code_pb2.OUT_OF_RANGE, message)


def unimplemented(message: str) -> P4RuntimeError:
    return P4RuntimeError(code_pb2.UNIMPLEMENTED, message)


def resource_exhausted(message: str) -> P4RuntimeError:
    return P4RuntimeError(code_pb2.RESOURCE_EXHAUSTED, message)


def unknown(message: str) -> P4RuntimeError:
    """What simple_switch_grpc (PI) answers when bmv2 refuses an operation it passed on
    (e.g. deleting an action-profile member an entry still uses)."""
    return P4RuntimeError(code_pb2.UNKNOWN, message)
