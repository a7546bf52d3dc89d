#!/usr/bin/env bash
# The Redis tests need a redis-server binary: install it when missing, then
# check that a throwaway server starts and answers (the tests start their own).
set -euo pipefail
cd "$(dirname "$0")/../.."

if ! command -v redis-server >/dev/null 2>&1; then
    echo "redis-server missing: installing it"
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
    if command -v apt-get >/dev/null 2>&1; then
        $sudo apt-get update
        $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y redis-server
    elif command -v dnf >/dev/null 2>&1; then
        $sudo dnf install -y redis
    elif command -v brew >/dev/null 2>&1; then
        brew install redis
    else
        echo "no known package manager to install redis-server with" >&2
        exit 1
    fi
fi
redis-server --version

# Try a few random high ports: one that is taken just fails to answer.
for _ in 1 2 3 4 5; do
    port=$((20000 + RANDOM % 30000))
    redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no \
        --dir "${TMPDIR:-/tmp}" >/dev/null 2>&1 &
    server=$!
    for _ in $(seq 1 100); do
        if redis-cli -p "$port" ping 2>/dev/null | grep -q PONG; then
            kill "$server"
            wait "$server" 2>/dev/null || true
            echo "redis-server starts and answers on 127.0.0.1:$port"
            exit 0
        fi
        sleep 0.05
    done
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
done
echo "redis-server did not start and answer on a loopback port" >&2
exit 1
