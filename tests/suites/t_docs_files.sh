# docs/architecture.md describes every source file (issue 33): each .c of a room is
# named there by its path or its name, and every path its file list names exists, so a
# new file without a line, or a line for a file that went, fails here.
. "$BEDTOP_SRCDIR/tests/lib.sh"
cd "$BEDTOP_SRCDIR" || exit 2
DOC=docs/architecture.md

missing=
for f in main.c app/*.c aws/*.c collectors/*.c core/*.c io/*.c net/*.c render/*.c tui/*.c; do
    grep -qF -- "$(basename "$f")" "$DOC" || missing="$missing $f"
done
if [ -z "$missing" ]; then ok "every source file is described in $DOC"; else
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
