#!/bin/sh
# Makes the upgrade fixtures by running earlier commits of this repository (see make_instance.py):
#   sh tests/store/upgrades/make_fixtures.sh     (from the repository root, with the venv's python)
# 0cfd2f6: the first commit with a store (2026-11-22); 5566af5: the last of that day, a week
# before these fixtures were made (pairing, jobs); 8e2232a: 2026-11-25 (the outbox, a chat's model).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
python=${PYTHON:-python3}
for commit in 0cfd2f6 5566af5 8e2232a; do
    checkout=$(mktemp -d)/countbot-$commit
    git worktree add --detach --quiet "$checkout" "$commit"
    rm -rf "$here/instance-$commit"
    PYTHONPATH="$checkout" "$python" "$here/make_instance.py" "$here/instance-$commit"
    git worktree remove --force "$checkout"
    rm -f "$here/instance-$commit/data/countbot.db-shm"
done
