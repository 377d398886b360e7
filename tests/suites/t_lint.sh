# scripts/lint enforces the whole one-way graph of DESIGN.md and the banned functions
# in every directory (issue 16: it checked two directions and skipped app/). On a
# copy of the sources: clean as it is, then each planted violation is caught and
# named by file and line, and what the graph allows (app/ including everything)
# is not.
. "$BEDTOP_SRCDIR/tests/lib.sh"
SRC=$BEDTOP_SRCDIR
copy() {
    rm -rf "$TMP/src"
    mkdir -p "$TMP/src"
    cp -r "$SRC/core" "$SRC/render" "$SRC/aws" "$SRC/net" "$SRC/collectors" "$SRC/tui" "$SRC/app" "$SRC/main.c" "$SRC/scripts" "$TMP/src/"
    mkdir -p "$TMP/src/tests" && cp -r "$SRC/tests/unit" "$TMP/src/tests/"
}
copy
"$TMP/src/scripts/lint" "$TMP/src" >"$TMP/clean.out" 2>&1
rc=$?
expect_eq "the sources as they are: lint is clean" "$rc $(cat "$TMP/clean.out")" "0 "
"$SRC/scripts/lint" >/dev/null 2>&1
expect_eq "scripts/lint with no argument checks the project itself" "$?" 0

# plant FILE LINE WHAT: lint must fail and name FILE:N
plant() {
    copy
    printf '%s\n' "$2" >>"$TMP/src/$1"
    n=$(wc -l <"$TMP/src/$1")
    "$TMP/src/scripts/lint" "$TMP/src" >"$TMP/lint.out" 2>&1
    rc=$?
    if [ "$rc" -eq 1 ] && grep -q "$1:$n:" "$TMP/lint.out"; then ok "lint catches $3 ($1:$n)"; else
        notok "lint misses $3 (exit $rc)"; sed 's/^/#   /' "$TMP/lint.out" | head -5
    fi
}
plant core/model.c '#include "tui/tui.h"' "core including tui/"
plant core/model.h '#include "collectors/cloudwatch.h"' "core including collectors/"
plant core/util.c '#include "app/app.h"' "core including app/"
plant core/headroom.c '#include <curl/curl.h>' "core including curl"
plant core/headroom.c '#include <ncursesw/curses.h>' "core including curses"
plant collectors/cloudwatch.c '#include "tui/tui.h"' "collectors including tui/"
plant collectors/demo.c '  #  include "app/app.h"' "collectors including app/ (spaced)"
plant collectors/quotas.c '#include <curses.h>' "collectors including curses"
plant tui/tui.c '#include "collectors/cloudwatch.h"' "tui including collectors/"
plant tui/tui.h '#include "app/view.h"' "tui including app/"
plant tui/graph.c '#include <curl/curl.h>' "tui including curl"
plant app/app.c 'static void f(char *b) { sprintf(b, "x"); }' "sprintf in app/"
plant main.c 'static void g(char *b) { strcpy(b, "x"); }' "strcpy in main.c"
plant collectors/quotas.c 'static void h(char *b) { strcat(b, "x"); }' "strcat in collectors/"
plant tests/unit/test_config.c 'static void k(char *b) { (void)strtok(b, ","); }' "strtok in tests/"

# what the graph allows
copy
printf '#include "tui/tui.h"\n#include "collectors/cloudwatch.h"\n#include "core/model.h"\n' >>"$TMP/src/app/app.c"
printf '#include "core/util.h"\n' >>"$TMP/src/tui/keys.c"
printf 'static void ok1(char *b) { snprintf(b, 2, "x"); }\n' >>"$TMP/src/core/util.c"
"$TMP/src/scripts/lint" "$TMP/src" >"$TMP/lint.out" 2>&1
expect_eq "app/ may include everything, tui/ core/, snprintf is fine" "$? $(cat "$TMP/lint.out")" "0 "
finish
