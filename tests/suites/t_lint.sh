# scripts/lint enforces DESIGN.md's Layout version 3 arrows (main -> app -> {tui, render,
# collectors, net}; collectors -> {aws, net, core}; aws -> net; tui -> {render, core};
# render -> core; app -> io -> core; aws/, collectors/ and tui/ use io/file.h alone of io/;
# aws/ and net/ use only core's leaf helpers; core points nowhere, does no I/O, writes to no
# stream, reads no environment and keeps no mutable file-scope or static variable but its
# allow-list's) and the banned functions in every directory. On a copy of the sources: clean as
# it is, then each planted violation (one per arrow that must not exist) is caught and
# named by file and line, and what the graph allows is not. No circles inside a room: a
# planted mutual call between two files of one folder fails the lint, naming both.
. "$BEDTOP_SRCDIR/tests/lib.sh"
SRC=$BEDTOP_SRCDIR
# The circle check reads the build's objects (those of $BEDTOP); the copies keep their
# sources' times (cp -p), so only a planted file is newer than its object and compiled again.
BEDTOP_OBJ=$(cd "$(dirname "$BEDTOP")" && pwd)
export BEDTOP_OBJ
copy() {
    rm -rf "$TMP/src"
    mkdir -p "$TMP/src"
    cp -rp "$SRC/core" "$SRC/io" "$SRC/render" "$SRC/aws" "$SRC/net" "$SRC/collectors" "$SRC/tui" "$SRC/app" "$SRC/main.c" "$SRC/scripts" "$TMP/src/"
    mkdir -p "$TMP/src/tests" && cp -rp "$SRC/tests/unit" "$TMP/src/tests/"
}
copy
"$TMP/src/scripts/lint" "$TMP/src" >"$TMP/clean.out" 2>&1
rc=$?
expect_eq "the sources as they are: lint is clean" "$rc $(cat "$TMP/clean.out")" "0 "
"$SRC/scripts/lint" >/dev/null 2>&1
expect_eq "scripts/lint with no argument checks the project itself" "$?" 0

# plant FILE LINE WHAT: lint must fail and name FILE:N (the circle check is planted below)
plant() {
    copy
    printf '%s\n' "$2" >>"$TMP/src/$1"
    n=$(wc -l <"$TMP/src/$1")
    BEDTOP_LINT_CIRCLES=no "$TMP/src/scripts/lint" "$TMP/src" >"$TMP/lint.out" 2>&1
    rc=$?
    if [ "$rc" -eq 1 ] && grep -q "$1:$n:" "$TMP/lint.out"; then ok "lint catches $3 ($1:$n)"; else
        notok "lint misses $3 (exit $rc)"; sed 's/^/#   /' "$TMP/lint.out" | head -5
    fi
}
plant render/exposition.c 'static void die(void) { abort(); }' "abort() instead of the out-of-memory rule"
plant core/model.c '#include "tui/tui.h"' "core including tui/"
plant core/model.h '#include "collectors/cloudwatch.h"' "core including collectors/"
plant core/util.c '#include "app/app.h"' "core including app/"
plant core/headroom.c '#include <curl/curl.h>' "core including curl"
plant core/headroom.c '#include <ncursesw/curses.h>' "core including curses"
plant collectors/cw_collect.c '#include "tui/tui.h"' "collectors including tui/"
plant collectors/demo.c '  #  include "app/app.h"' "collectors including app/ (spaced)"
plant collectors/quota_collect.c '#include <curses.h>' "collectors including curses"
plant tui/tui.c '#include "collectors/cloudwatch.h"' "tui including collectors/"
plant tui/tui.h '#include "app/view.h"' "tui including app/"
plant tui/graph.c '#include <curl/curl.h>' "tui including curl"
plant app/app.c 'static void f(char *b) { sprintf(b, "x"); }' "sprintf in app/"
plant main.c 'static void g(char *b) { strcpy(b, "x"); }' "strcpy in main.c"
plant collectors/quota_collect.c 'static void h(char *b) { strcat(b, "x"); }' "strcat in collectors/"
plant tests/unit/test_config.c 'static void k(char *b) { (void)strtok(b, ","); }' "strtok in tests/"
# curl's rule, in every room
plant core/model.c 'static int a1(int *p) { int x; if ((x = *p) > 0) return x; return 0; }' "an assignment in an if (core)"
plant collectors/quota_collect.c 'static const char *a2(const char *s) { const char *q; if (!(q = s)) return 0; return q; }' "an assignment in an if (collectors)"
plant core/recscan.c 'static int a3(int *p) { int n = 0; while ((*p -= 1) > 0) n++; return n; }' "a compound assignment in a while"
plant tui/theme.c 'static int a4(int a, int b) { if (a && (b = a)) return b; return 0; }' "an assignment after && (tui)"
# every arrow that points up or sideways
# a room's file over 800 lines (aws/, net/, collectors/, core/), named at line 801; tui/'s
# and render/'s are not counted
copy
n=$(wc -l <"$TMP/src/core/sides.c")
while [ "$n" -le 800 ]; do echo '/* padding */' >>"$TMP/src/core/sides.c"; n=$((n + 1)); done
BEDTOP_LINT_CIRCLES=no "$TMP/src/scripts/lint" "$TMP/src" >"$TMP/lint.out" 2>&1
rc=$?
if [ "$rc" -eq 1 ] && grep -q "core/sides.c:801: 801 lines" "$TMP/lint.out"; then
    ok "lint catches a core/ file of 801 lines (core/sides.c:801)"
else
    notok "lint misses a core/ file of 801 lines (exit $rc)"; sed 's/^/#   /' "$TMP/lint.out" | head -5
fi
copy
n=$(wc -l <"$TMP/src/tui/overview.c")
while [ "$n" -le 900 ]; do echo '/* padding */' >>"$TMP/src/tui/overview.c"; n=$((n + 1)); done
BEDTOP_LINT_CIRCLES=no "$TMP/src/scripts/lint" "$TMP/src" >"$TMP/lint.out" 2>&1
expect_eq "a tui/ file of 901 lines is not a finding" "$? $(cat "$TMP/lint.out")" "0 "
plant main.c '#include "render/report.h"' "main.c including render/ (main -> app only)"
plant main.c '#include "collectors/demo.h"' "main.c including collectors/"
# an option row no command's entry names (commands as entries: each takes its options by name)
plant main.c '    {.o = {.name = "lint-orphan", .has_arg = no_argument}, .type = BT_OPT_T_FLAG},' \
    "an option of main.c's table that no command's entry takes"
plant app/app.c '#include "aws/awsauth.h"' "app including aws/ (through collectors only)"
plant tui/tui.c '#include "net/http.h"' "tui including net/"
plant tui/draw.c '#include "aws/sigv4.h"' "tui including aws/"
plant render/report.c '#include "tui/tui.h"' "render including tui/"
plant render/exposition.c '#include "collectors/collector.h"' "render including collectors/"
plant render/report_text.c '#include "app/app.h"' "render including app/"
plant collectors/demo.c '#include "render/report.h"' "collectors including render/"
plant aws/region.c '#include "collectors/collector.h"' "aws including collectors/"
plant aws/creds.c '#include "core/model.h"' "aws including core beyond its leaf helpers"
plant aws/policy.h '#include "render/report.h"' "aws including render/"
plant net/loop.h '#include "collectors/collector.h"' "net including collectors/"
plant net/http.h '#include "aws/sigv4.h"' "net including aws/"
plant net/httpd.c '#include "core/config.h"' "net including core beyond its leaf helpers"
plant core/format.c '#include "render/report.h"' "core including render/"
plant core/apicost.c '#include "net/http.h"' "core including net/"
plant core/model.c '#include "aws/sigv4.h"' "core including aws/"
plant core/oppoint.c '#include <openssl/sha.h>' "core including OpenSSL"
plant core/plausible.c '#include <sys/socket.h>' "core including sockets"
plant core/model.c 'static void *io(void) { return fopen("/tmp/x", "r"); }' "file I/O in core (fopen)"
plant core/headroom.c 'static int io2(void) { return open("/tmp/x", 0); }' "file I/O in core (open)"
plant core/oppoint.c 'static int so(void) { return socket(2, 1, 0); }' "a socket in core"
# the files that used to do their own I/O (the recorder, the reader, the config and
# burndown loaders, util.c's file reading) are held to the rule like the rest
plant core/recording.c 'static void *io3(void) { return fopen("/tmp/x", "w"); }' "fopen in the recording writer"
plant core/recread.c 'static long io4(int fd, char *b) { return read(fd, b, 1); }' "read() in the recording reader"
plant core/config_ini.c 'static char *io5(void) { return bt_read_file("/tmp/x", 1, 0); }' "bt_read_file in the config parser"
plant core/burndown.c 'static int io6(void) { return access("/tmp/x", 4); }' "access() in the burndown table"
plant core/util.c 'static int io7(int fd) { return fsync(fd); }' "fsync in core/util.c"
plant core/recording.c 'static int io8(void) { return rename("/tmp/a", "/tmp/b"); }' "rename in core"
plant core/recording.h 'static inline int io9(int fd) { return close(fd); }' "close() in a core header"
# no stdio in core (issue 33: core writes nothing to stderr; io/'s bt_err does), no environment
plant core/x.c 'static void f(void) { fputs("x", stderr); }' "fputs to stderr in core (a new file)"
plant core/model.c 'static void p1(int n) { fprintf(stderr, "%d\n", n); }' "fprintf(stderr) in core"
plant core/recscan.c 'static void p2(void) { printf("x\n"); }' "printf in core"
plant core/config.c 'static void p3(void) { perror("config"); }' "perror in core"
plant core/format.c 'static void p4(void) { putchar(10); }' "putchar in core"
plant core/util.c 'static void p5(const char *s) { puts (s); }' "puts (spaced) in core"
plant core/json.c 'static void *p6(void) { return stdout; } /* no call: the stream named */' "stdout named in core"
plant core/sanitize.h 'static inline int p7(void) { return getc(stdin); }' "stdin read in a core header"
plant core/config.c 'static const char *e1(void) { return getenv("HOME"); }' "getenv in core"
# no process-global state in core (issue 33): a mutable file-scope or static variable
plant core/model.c 'static int lint_calls;' "a mutable file-scope static in core"
plant core/util.c 'int bt_lint_live = 0;' "a mutable global in core"
plant core/model.h 'extern double bt_lint_scale;' "an extern global in a core header"
plant core/format.c 'static void (*lint_hook)(void);' "a file-scope hook (function pointer) in core"
plant core/sides.c 'static int s1(void) { static int n; return ++n; }' "a static local in core"
plant core/events.c 'static _Thread_local char lint_buf[64];' "a thread-local buffer in core"
plant core/json.c 'static struct bt_json_arena *arena_now2;' "a second arena pointer beside the allowed one"
# core never seeks a caller's replay (issue 33): walks seek a cursor of their own
plant core/reportcalc.c 'static void w1(struct bt_replay *rp) { bt_replay_seek(rp, 0); }' "a walk seeking the caller's replay"
plant core/events.h 'static inline void w2(struct bt_replay *rp) { bt_replay_seek (rp, 1); }' "a seek of the caller's replay in a core header"
plant core/recread.c '#include <unistd.h>' "core including unistd.h"
plant core/util.c '#include <sys/stat.h>' "core including sys/stat.h"
plant core/model.c '#include <ini.h>' "inih outside core/config_ini.c"
plant render/report.c '#include <curl/curl.h>' "render including curl"
plant core/model.c '#include "io/file.h"' "core including io/"
plant io/file.c '#include "app/app.h"' "io including app/"
plant io/file.h '#include "core/model.h"' "io/file.h including core beyond its leaf helpers"
plant render/chart.c '#include "io/file.h"' "render including io/"
plant net/loop.c '#include "io/file.h"' "net including io/"
plant net/httpd.c '#include <ncursesw/curses.h>' "net including curses"
# the views read an evaluation through core's readers (issue 33), not its fields
plant tui/routes.c 'static int p1(const struct bt_eval *e) { return e->status; }' "tui reading bt_eval's status"
plant render/report.c 'static double p2(const struct bt_eval *evals) { return evals[0].quota; }' "render reading an evals element's quota"
plant app/replay_view.c 'static long p3(const struct bt_eval *ea) { return (long)ea->minute; }' "app reading an evaluation's minute"
plant app/app.c 'static unsigned long p4(const struct bt_store *st) { return st->nevents; }' "app reading the store's event count"
plant tui/routes.c 'static unsigned long p5(const struct app_like { struct bt_store store; } *a) { return a->store.generation; }' "tui reading a member store's generation"
plant render/csv.c 'static int p6(const struct bt_store *store) { return store->nroutes; }' "render reading the store's routes"

# circles inside a room: FILE LINE FILE LINE WHAT, two files of one folder that call each
# other; lint must fail and name the pair
circle() {
    copy
    printf '%s\n' "$2" >>"$TMP/src/$1"
    printf '%s\n' "$4" >>"$TMP/src/$3"
    "$TMP/src/scripts/lint" "$TMP/src" >"$TMP/lint.out" 2>&1
    rc=$?
    if [ "$rc" -eq 1 ] && grep -q "^$1 <-> $3 " "$TMP/lint.out"; then ok "lint catches $5 ($1 <-> $3)"; else
        notok "lint misses $5 (exit $rc)"; sed 's/^/#   /' "$TMP/lint.out" | head -5
    fi
}
# awsauth.c calls creds_env.c (bt_aws_plan_env); a provider calling back into awsauth.c
# closes the circle the provider table untied
circle aws/awsauth.c '' aws/creds_env.c \
    'void bt_aws_lint_back(void); void bt_aws_lint_back(void) { bt_aws_job_cancel(0); }' \
    "a provider calling back into awsauth.c"
# headroom.c calls sides.c (bt_side_route); a side calling back up into headroom.c closes
# the circle the evaluation's layers untied
circle core/headroom.c '' core/sides.c \
    'void bt_lint_back(void); void bt_lint_back(void) { bt_eval_groups_free(0); }' \
    "a side calling back up into headroom.c"
# the store's series (core/series.c) call burndown.c (bt_burndown_measure), and counters.c
# adds to them (the store frees the readings through the hook counters.c sets); the
# measurement reading the store again, or the store calling counters.c, closes a circle
# untied
circle core/burndown.c \
    'double bt_lint_bd(const struct bt_store *s); double bt_lint_bd(const struct bt_store *s) { return bt_store_at(s, 0, BT_SIG_INVOCATIONS, 0); }' \
    core/series.c '' "the burndown measurement reading the store again"
circle core/counters.c '' core/series.c \
    'void bt_counters_free(struct bt_store *s); void bt_lint_ctr(struct bt_store *s); void bt_lint_ctr(struct bt_store *s) { bt_counters_free(s); }' \
    "the store calling counters.c to free them"
circle io/conffile.c 'void lint_b(void); void lint_a(void); void lint_a(void) { lint_b(); }' \
    io/file.c 'void lint_a(void); void lint_b(void); void lint_b(void) { lint_a(); }' \
    "two files of io/ calling each other"
circle tui/graph.c 'extern int lint_d; void lint_c(void); void lint_c(void) { lint_d++; }' \
    tui/theme.c 'int lint_d; void lint_c(void); int lint_e(void); int lint_e(void) { lint_c(); return lint_d; }' \
    "a file using another's data while it calls back"

# what the graph allows
copy
printf '#include "tui/tui.h"\n#include "collectors/cloudwatch.h"\n#include "core/model.h"\n' >>"$TMP/src/app/app.c"
printf '#include "core/util.h"\n' >>"$TMP/src/tui/keys.c"
printf 'static void ok1(char *b) { snprintf(b, 2, "x"); }\n' >>"$TMP/src/core/util.c"
# stdio named in a comment or a string, a buffer's printf and a member's are not stdio
printf '%s\n' '/* as fputs(s, stderr) would, to stdout */' \
    'static void ok2(struct bt_buf *b, char *o, va_list ap) { bt_buf_printf(b, "printf(%s)", "stderr"); vsnprintf(o, 2, "x", ap); }' \
    'struct ok3 { int (*printf)(const char *); }; static int ok4(struct ok3 *k) { return k->printf("getenv(x)"); }' >>"$TMP/src/core/util.c"
printf '#include "core/sanitize.h"\n#include "net/http.h"\n' >>"$TMP/src/aws/region.c"
printf '#include "core/json.h"\n' >>"$TMP/src/net/httpd.c"
printf '#include "aws/sigv4.h"\n#include "net/loop.h"\n' >>"$TMP/src/collectors/demo.c"
printf '#include "render/report.h"\n#include "net/httpd.h"\n' >>"$TMP/src/app/view.c"
printf '#include "render/report.h"\n' >>"$TMP/src/tui/draw.c"
printf '#include "io/file.h"\n' >>"$TMP/src/collectors/demo.c"
printf '#include "core/config.h"\n' >>"$TMP/src/io/file.c"
# constants, declarations and types are not state
printf '%s\n' 'static const int ok5 = 1;' 'static const char *const ok6[] = {"static int x;"};' 'struct ok7;' \
    'typedef int ok8;' 'static int ok9(int x) { const int y = x; return y; } /* static int z; */' >>"$TMP/src/core/format.c"
printf 'static int op(int x) { return x; } /* a name ending in open is not I/O */\nstatic int reopen_count(void) { return op(1); }\n' >>"$TMP/src/core/format.c"
printf 'static int cmpok(int a, int b) { if (a == b || a <= b || a != -b || a >= 2) return 1; for (int i = 0; i < 2; i++) a += i; return a; }\n' >>"$TMP/src/core/model.c"
printf 'static int sk(const struct bt_rec_sink *k) { return k->write(k->arg, "", 0) + bt_rec_write_x(); }\n' >>"$TMP/src/core/recording.c"
# a call one way between two files of one folder is layering, not a circle
printf 'void lint_f(void); void lint_f(void) { }\n' >>"$TMP/src/io/file.c"
printf 'void lint_f(void); void lint_g(void); void lint_g(void) { lint_f(); }\n' >>"$TMP/src/io/conffile.c"
"$TMP/src/scripts/lint" "$TMP/src" >"$TMP/lint.out" 2>&1
expect_eq "the arrows that exist are allowed (app -> tui, collectors, render, net; tui -> render;
collectors -> aws, net, io/file.h; aws -> net and core's leaf helpers; net -> core/json.h;
io -> core), snprintf is fine, a sink's write member is not I/O, stdio named in a comment or a
string and a buffer's printf are not stdio, comparisons are not assignments, constants,
declarations and types are not state,
a call one way between two files of one folder is not a circle" \
    "$? $(cat "$TMP/lint.out")" "0 "
finish
