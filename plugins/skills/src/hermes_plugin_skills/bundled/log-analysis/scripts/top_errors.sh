#!/bin/sh
# The most frequent error and warning lines of a log, with numbers, hex ids and timestamps
# collapsed so that repeats of one message count together.
# usage: top_errors.sh LOGFILE [HOW_MANY]
set -eu
file=${1:?usage: top_errors.sh LOGFILE [HOW_MANY]}
count=${2:-15}
grep -iE 'error|warn|fatal|exception|traceback' -- "$file" \
  | sed -E 's/^[0-9T:., +-]{8,}Z? ?//; s/0x[0-9a-fA-F]+/HEX/g; s/[0-9a-f]{8}-[0-9a-f-]{27}/UUID/g; s/[0-9]+/N/g' \
  | sort | uniq -c | sort -rn | head -n "$count"
