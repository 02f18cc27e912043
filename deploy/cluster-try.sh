#!/usr/bin/env bash
# Try a three-node beanpod cluster on one machine (docs/cluster.md): 3 etcd members,
# 3 beanpod nodes and HAProxy, all on loopback addresses; Ctrl-C stops them all.
#
#   deploy/cluster-try.sh [WORKDIR]      (Debian: apt-get install etcd-server etcd-client
#                                         haproxy; pip install 'beanpod[cluster,redis]')
#
#   etcd members   127.0.0.11-13:2379 (peers :2380)
#   beanpod nodes  127.0.0.11-13:11300 (beanstalkd), :9922 (Workq), :6379 (Redis/qless),
#                  HTTP :8080 (GET /leader)
#   HAProxy        127.0.0.1:11300, :9922, :6379 -> that door of the leader (clients
#                  connect here; BEANPOD_PROXY, BEANPOD_PROXY_WORKQ, BEANPOD_PROXY_REDIS
#                  move them)
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in etcd etcdctl haproxy python3; do
  command -v "$tool" >/dev/null || { echo "cluster-try: $tool is not on PATH (Debian: apt-get install etcd-server etcd-client haproxy)" >&2; exit 1; }
done
# every node opens the Redis door (hiredis: beanpod[redis]) and talks to etcd (beanpod[cluster])
python3 -c 'import beanpod, aiohttp, hiredis' 2>/dev/null || {
  echo "cluster-try: python3 cannot import beanpod with its extras: pip install 'beanpod[cluster,redis]'" >&2; exit 1; }
work=${1:-$(mktemp -d /tmp/beanpod-cluster.XXXXXX)}
mkdir -p "$work"
pids=()
stop() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; wait; }
trap stop EXIT INT TERM

hosts=(127.0.0.11 127.0.0.12 127.0.0.13)
initial=e1=http://127.0.0.11:2380,e2=http://127.0.0.12:2380,e3=http://127.0.0.13:2380
for i in 1 2 3; do
  host=${hosts[$((i - 1))]}
  # --pre-vote: a member cut off and back forces no election; 50/500 ms: a LAN's Raft timing
  etcd --name "e$i" --data-dir "$work/e$i" --snapshot-count 5000 --pre-vote \
    --heartbeat-interval 50 --election-timeout 500 \
    --listen-client-urls "http://$host:2379" --advertise-client-urls "http://$host:2379" \
    --listen-peer-urls "http://$host:2380" --initial-advertise-peer-urls "http://$host:2380" \
    --initial-cluster "$initial" --initial-cluster-state new \
    --initial-cluster-token beanpod-try >"$work/e$i.log" 2>&1 &
  pids+=($!)
done
until etcdctl --endpoints=127.0.0.11:2379 endpoint health >/dev/null 2>&1; do sleep 0.2; done

etcd_endpoints=127.0.0.11:2379,127.0.0.12:2379,127.0.0.13:2379
for i in 1 2 3; do
  host=${hosts[$((i - 1))]}
  python3 -m beanpod serve --cluster "etcd://$etcd_endpoints/try" --node-id "n$i" \
    -l "$host" -p 11300 --workq-port 9922 --redis-port 6379 --http "$host:8080" \
    -b "$work/n$i" >"$work/n$i.log" 2>&1 &
  pids+=($!)
  export "BEANPOD_NODE$i=$host:11300" "BEANPOD_NODE${i}_HTTP=8080" \
    "BEANPOD_NODE${i}_WORKQ=$host:9922" "BEANPOD_NODE${i}_REDIS=$host:6379"
done
export BEANPOD_PROXY=${BEANPOD_PROXY:-127.0.0.1:11300}
export BEANPOD_PROXY_WORKQ=${BEANPOD_PROXY_WORKQ:-127.0.0.1:9922}
export BEANPOD_PROXY_REDIS=${BEANPOD_PROXY_REDIS:-127.0.0.1:6379}
haproxy -f deploy/haproxy-cluster.cfg -db >"$work/haproxy.log" 2>&1 &
pids+=($!)

echo "cluster up (logs in $work): clients connect to $BEANPOD_PROXY (beanstalkd)," \
  "$BEANPOD_PROXY_WORKQ (Workq), $BEANPOD_PROXY_REDIS (Redis: qless)"
for i in 1 2 3; do echo "  node n$i: pid ${pids[$((i + 2))]}, GET http://${hosts[$((i - 1))]}:8080/leader"; done
echo "try: kill -9 the leader's pid, then keep using $BEANPOD_PROXY; Ctrl-C stops everything"
wait
