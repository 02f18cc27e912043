"""Every test module of the cluster's: `pytestmark = needs_etcd`."""

import pytest
from bench.etcd_members import have_etcd

needs_etcd = pytest.mark.skipif(
    not have_etcd(), reason="etcd is not on PATH (Debian: apt-get install etcd-server etcd-client)"
)
