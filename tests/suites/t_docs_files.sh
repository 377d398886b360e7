# docs/architecture.md describes every source file (issue 33): each .c and .h of a room
# is named there by its path, or by its name where no other room's file has that name
# (app/view.h and tui/view.h, core/plan.h and render/plan.h: by path), and every path its
# file list names exists, so a new file without a line, or a line for a file that went,
# fails here.
. "$BEDTOP_SRCDIR/tests/lib.sh"
cd "$BEDTOP_SRCDIR" || exit 2
DOC=docs/architecture.md

ls main.c app/*.[ch] aws/*.[ch] collectors/*.[ch] core/*.[ch] io/*.[ch] net/*.[ch] render/*.[ch] \
    tui/*.[ch] >"$TMP/sources" 2>/dev/null
check "the rooms' sources are found" test -s "$TMP/sources"
grep -c '\.h$' "$TMP/sources" >"$TMP/nh"
check "headers are among them" test "$(cat "$TMP/nh")" -gt 0
sed 's|.*/||' "$TMP/sources" | sort | uniq -d >"$TMP/shared_names"
missing=
while read -r f; do
    grep -qF -- "$f" "$DOC" && continue
    b=$(basename "$f")
    if ! grep -qxF -- "$b" "$TMP/shared_names" && grep -qF -- "$b" "$DOC"; then continue; fi
    missing="$missing $f"
done <"$TMP/sources"
if [ -z "$missing" ]; then ok "every source file (.c and .h) is described in $DOC"; else
    notok "$DOC does not describe:$missing"
fi

# The file list ("The other files, room by room"): one entry a line at column 0.
awk '/^## The other files/ { f = 1; next } f && /^```/ { n++; if (n == 2) exit; next }
     f && n == 1 && /^[a-z]/ { print $1 }' "$DOC" >"$TMP/listed"
check "the file list of $DOC is not empty" test -s "$TMP/listed"
gone=
while read -r p; do [ -f "$p" ] || gone="$gone $p"; done <"$TMP/listed"
if [ -z "$gone" ]; then ok "every file $DOC lists exists"; else notok "$DOC lists files that do not exist:$gone"; fi
LC_ALL=C sort -c "$TMP/listed" 2>/dev/null && ok "$DOC lists the files in order" || notok "$DOC's file list is not sorted"
finish
