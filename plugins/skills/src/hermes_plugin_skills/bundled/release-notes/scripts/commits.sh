#!/bin/sh
# Usage: commits.sh FROM TO - one line per non-merge commit: subject (author, short hash).
set -eu
git log --no-merges --format='%s (%an, %h)' "$1..$2"
