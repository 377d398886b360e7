/* Small helpers that make the rest read like prose: a growable string,
 * checked allocation, bounded copies, time parsing and formatting. */
#ifndef BEDTOP_UTIL_H
#define BEDTOP_UTIL_H
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BT_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Checked allocation: out of memory is bt_out_of_memory. */
void *bt_xmalloc(size_t n);
void *bt_xcalloc(size_t n, size_t size);
void *bt_xrealloc(void *p, size_t n);
char *bt_xstrdup(const char *s);
/* Out of memory: calls the hook the program installed at start-up (which says so: core
 * writes nothing itself; io/file.h's bt_oom_say writes "bedtop: out of memory" on
 * stderr), then exits 3; with no hook (NULL, the default) it exits 3 alone. */
typedef void (*bt_oom_fn)(void);
void bt_set_oom_hook(bt_oom_fn say);
_Noreturn void bt_out_of_memory(void);

/* Copies at most dstsize-1 bytes and always terminates; returns strlen(src). */
size_t bt_strlcpy(char *dst, const char *src, size_t dstsize);
/* For a fixed field that holds a message with text from outside (a server's error,
 * an event's text): copies src, or when it does not fit cuts it on a character
 * boundary and ends it in "..." so the cut shows. True when it fit whole. Where the
 * longest text is known, size the buffer instead. */
bool bt_strlcpy_cut(char *dst, const char *src, size_t dstsize);
/* The same for a message formatted whole first (bt_buf), then copied. */
bool bt_fmt_cut(char *dst, size_t dstsize, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Growable string. len excludes the NUL; buf is always terminated once used. */
struct bt_buf {
    char *buf;
    size_t len;
    size_t cap;
};
void bt_buf_reserve(struct bt_buf *b, size_t extra);
void bt_buf_add(struct bt_buf *b, const void *data, size_t n);
void bt_buf_puts(struct bt_buf *b, const char *s);
void bt_buf_putc(struct bt_buf *b, char c);
void bt_buf_printf(struct bt_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* What printf's "%.0f" writes for v (rounded to nearest, ties to even; "-0" for a
 * negative that rounds to 0), without printf where |v| < 1e15. */
void bt_buf_fixed0(struct bt_buf *b, double v);
/* The same into out (n bytes; BT_FIXED0_MAX holds any double's 309 digits): a
 * message's whole numbers, where printf's multi-precision way cost ~1,500
 * instructions a number (the dashboard's rules print hundreds an evaluation). */
#define BT_FIXED0_MAX 320
char *bt_fmt_fixed0(double v, char *out, size_t n);
void bt_buf_vprintf(struct bt_buf *b, const char *fmt, va_list ap);
void bt_buf_reset(struct bt_buf *b);
void bt_buf_free(struct bt_buf *b);
const char *bt_buf_str(struct bt_buf *b); /* never NULL */
/* Appends s as a JSON string literal (quotes, escapes, control characters). */
void bt_buf_json_str(struct bt_buf *b, const char *s);
/* v in decimal (what "%lld" prints), without printf. */
void bt_buf_put_int(struct bt_buf *b, long long v);
/* The same written backwards so that it ends just before end (room for 20 bytes
 * before it); returns where it begins. */
char *bt_fmt_int_before(char *end, long long v);

/* The 1-based number of the first line of text longer than max bytes (its
 * newline not counted), 0 if none. For line parsers with a fixed buffer (inih)
 * that would read the rest of a long line as a line of its own. */
int bt_first_long_line(const char *text, size_t max);

/* Time: epoch seconds, UTC. */
/* A time from outside (a Prometheus value or timestamp, JSON): true and *out
 * set when v is finite and within year 1970..9999 (0 .. BT_TIME_MAX), else
 * false: a huge finite double converted to int64_t is undefined behaviour. */
#define BT_TIME_MAX 253402300799.0 /* 9999-12-31T23:59:59Z */
bool bt_time_from_double(double v, int64_t *out);
int64_t bt_minute_floor(int64_t t);
void bt_fmt_iso(int64_t t, char *out, size_t n);     /* 2026-11-29T10:00:00Z */
void bt_fmt_hhmm(int64_t t, char *out, size_t n);    /* 10:00 */
/* Strict ISO-8601: YYYY-MM-DD[(T| )HH:MM[:SS[.frac]]][Z|+HH:MM|+HHMM|+HH], a real
 * calendar day (no Feb 31), nothing after it; no zone means UTC. */
bool bt_parse_iso(const char *s, int64_t *out);
/* "90", "90s", "1.5m", "3h", "2d" -> seconds: digits and an optional fraction, then
 * an optional unit; no sign, exponent, blank or inf. At most BT_DURATION_MAX. */
#define BT_DURATION_MAX (100.0 * 365 * 86400) /* 100 years: any longer is a typo */
bool bt_parse_duration(const char *s, double *out);
/* Human-friendly number: 1.2M, 350k, 12 */
void bt_fmt_si(double v, char *out, size_t n);

/* Strict number parsing: the whole string must be a finite number. */
bool bt_parse_double(const char *s, double *out);
/* The median of v[0 .. k) (no NaN among them; NAN for none), the mean of the two middle
 * values for an even k: the values a sort gives, found by selection (v is reordered).
 * The spend baseline and the steady burndown took a qsort per route and evaluation. */
double bt_median(double *v, int k);
bool bt_parse_long(const char *s, long min, long max, long *out);
/* url as a message, a --verbose line or a recording may show it (the one redactor):
 * a password becomes "user:***@" (a user alone, which may be a token, "***@"), every
 * query value "***" (?token=*** , a bare ?name ?***), the #fragment is dropped. The
 * authority is found as curl finds it, after any number of slashes (http:/u:p@h). */
void bt_url_redact(const char *url, char *out, size_t n);
/* Trims leading/trailing blanks in place; returns s. */
char *bt_trim(char *s);
bool bt_streq_nocase(const char *a, const char *b);

/* Data files of "key = value" lines (# and ; start comments, blank lines
 * skipped): calls line(arg, key, value, lineno) for each; a false return stops
 * with the message it left in err. Errors read "name:line: why". */
typedef bool (*bt_kv_fn)(void *arg, char *key, char *value, const char *name, int lineno,
                         char *err, size_t errlen);
bool bt_parse_kv_lines(const char *text, const char *name, const char *expect, bt_kv_fn line,
                       void *arg, char *err, size_t errlen);
#endif
