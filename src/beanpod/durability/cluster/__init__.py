"""The log of a beanpod cluster, kept in etcd (docs/cluster.md)."""
