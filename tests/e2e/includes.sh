#!/bin/bash
# Include direction (scripts/check-includes): the tree passes, and a copy
# of it with planted violations fails, naming each one: a host file
# including the agent's header, proto/ including common/, the plugin
# including more of proto/ than the record format, the record format
# header including another, a bare include, two modules of a folder
# including each other, a sub-folder including one above it (inside
# host/ and inside common/), a source folder without a row, and a file
# its folder's map does not name.
. "$(dirname "$0")/lib.inc"

out=$(scripts/check-includes 2>&1) || fail "the tree breaks the include rule:"$'\n'"$out"
pass "$out"

t=$E2E_TMP/tree
mkdir -p "$t/scripts"
cp -r proto common agent host plugin "$t/"
cp scripts/check-includes "$t/scripts/"
echo '#include "agent/agent.h"' >> "$t/host/cmd/sync_cmd.c"
echo '#include "common/base/log.h"' >> "$t/proto/proto.h"
echo '#include "proto/proto.h"' >> "$t/plugin/plugin_tsync.c"
echo '#include "log.h"' >> "$t/common/base/log.c"
echo '#include "proto/proto.h"' >> "$t/proto/tsync_record.h"
printf '#include "common/base/zz_b.h"\n' > "$t/common/base/zz_a.h"
printf '#include "common/base/zz_a.h"\n' > "$t/common/base/zz_b.c"
: > "$t/common/base/zz_b.h"
echo '#include "host/cmd/commands.h"' >> "$t/host/peer/client.c"
echo '#include "common/stamp/stamp.h"' >> "$t/common/base/log.h"
mkdir "$t/common/zz"
: > "$t/common/zz/zz.c"
: > "$t/common/net/zz_unlisted.c"
out=$("$t/scripts/check-includes" 2>&1) && fail "planted violations passed: $out"
for want in \
	'host/cmd/sync_cmd.c:[0-9]*: #include "agent/agent.h": host/cmd/ may not include agent/' \
	'proto/proto.h:[0-9]*: #include "common/base/log.h": proto/ may not include common/' \
	'plugin/plugin_tsync.c:[0-9]*: #include "proto/proto.h": plugin/ may not include proto/' \
	'common/base/log.c:[0-9]*: #include "log.h" without its folder' \
	'proto/tsync_record.h:[0-9]*: #include "proto/proto.h": the record format header stands alone' \
	'common/base/: modules include each other in a loop: zz_[ab] zz_[ab]$' \
	'host/peer/client.c:[0-9]*: #include "host/cmd/commands.h": host/peer/ may not include host/cmd/' \
	'common/base/log.h:[0-9]*: #include "common/stamp/stamp.h": common/base/ may not include common/stamp/' \
	'common/zz/zz.c: its folder common/zz/ has no row' \
	'common/net/zz_unlisted.c: not named in its folder.s map, the first comment of common/net/transport.h'; do
	grep -q "$want" <<<"$out" || fail "not reported: $want; got:"$'\n'"$out"
done
pass "planted violations reported: $(grep -c . <<<"$out") lines"
