"""Which gRPC failures leave an append's outcome unknown (a retry follows, and its
failure branch tells whether the first try committed) and which are etcd's refusals."""

from __future__ import annotations

import aetcd
import pytest
from aetcd import rpc
from grpc.aio import Metadata

from beanpod.durability.cluster.etcd import EtcdUnknown
from beanpod.durability.cluster.grpc_appends import failure, host_port


def aetcd_error(code: rpc.StatusCode, details: str) -> aetcd.ClientError:
    """What aetcd raises: its own error, caused by grpc's."""
    cause = rpc.AioRpcError(code, Metadata(), Metadata(), details)
    error = aetcd.ClientError(details)
    error.__cause__ = cause
    return error


@pytest.mark.parametrize(
    ("code", "details"),
    [
        (rpc.StatusCode.UNAVAILABLE, "etcdserver: leader changed"),
        (rpc.StatusCode.UNAVAILABLE, "failed to connect to all addresses"),
        (rpc.StatusCode.DEADLINE_EXCEEDED, "Deadline Exceeded"),
        (rpc.StatusCode.CANCELLED, "Cancelled"),
        (rpc.StatusCode.RESOURCE_EXHAUSTED, "etcdserver: too many requests"),
    ],
)
def test_transport_failures_and_passing_refusals_are_unknown(
    code: rpc.StatusCode, details: str
) -> None:
    error = failure("http://m:1", aetcd_error(code, details))
    assert isinstance(error, EtcdUnknown) and details in str(error)


@pytest.mark.parametrize(
    ("code", "details"),
    [
        (rpc.StatusCode.INVALID_ARGUMENT, "etcdserver: request is too large"),
        (rpc.StatusCode.RESOURCE_EXHAUSTED, "etcdserver: mvcc: database space exceeded"),
        (rpc.StatusCode.UNAUTHENTICATED, "etcdserver: invalid auth token"),
    ],
)
def test_etcds_own_refusals_are_errors(code: rpc.StatusCode, details: str) -> None:
    error = failure("http://m:1", aetcd_error(code, details))
    assert not isinstance(error, EtcdUnknown) and str(error) == f"http://m:1: {details}"


def test_an_error_without_grpcs_cause_is_unknown() -> None:
    assert isinstance(failure("http://m:1", TimeoutError()), EtcdUnknown)


def test_endpoints_name_the_grpc_target() -> None:
    assert host_port("http://127.0.0.11:2379") == ("127.0.0.11", 2379)
    assert host_port("http://[::1]:2379") == ("[::1]", 2379)
