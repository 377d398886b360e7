#include "core/json.h"

#include "core/format.h"
#include "core/sanitize.h"

#include <float.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *bt_json_print(const cJSON *j, bool pretty)
{
    char *s = j ? (pretty ? cJSON_Print(j) : cJSON_PrintUnformatted(j)) : NULL;
    if (!s) {
        /* cJSON_Print fails only when its allocation does (or j is NULL, which is
         * what cJSON_Create* return when theirs did) */
        bt_out_of_memory();
    }
    return s;
}

void bt_buf_json(struct bt_buf *b, const cJSON *j, bool pretty)
{
    char *s = bt_json_print(j, pretty);
    bt_buf_puts(b, s);
    cJSON_free(s);
}

/* cJSON's print_string_ptr: ", \\ and the control characters escaped, the rest as is */
static void compact_string(struct bt_buf *b, const char *s)
{
    bt_buf_putc(b, '"');
    /* 1: ends a run (the terminator, a control character, '"' or '\\') */
    static const unsigned char stop[256] = {
        [0] = 1,  [1] = 1,  [2] = 1,  [3] = 1,  [4] = 1,  [5] = 1,  [6] = 1,  [7] = 1,
        [8] = 1,  [9] = 1,  [10] = 1, [11] = 1, [12] = 1, [13] = 1, [14] = 1, [15] = 1,
        [16] = 1, [17] = 1, [18] = 1, [19] = 1, [20] = 1, [21] = 1, [22] = 1, [23] = 1,
        [24] = 1, [25] = 1, [26] = 1, [27] = 1, [28] = 1, [29] = 1, [30] = 1, [31] = 1,
        ['"'] = 1, ['\\'] = 1};
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    while (*p) {
        const unsigned char *q = p;
        while (!stop[*q])
            q++;
        bt_buf_add(b, p, (size_t)(q - p));
        if (!*q)
            break;
        static const char named[] = "btnvfr"; /* \b \t \n (no \v) \f \r */
        unsigned char c = *q;
        if (c == '"' || c == '\\') {
            bt_buf_putc(b, '\\');
            bt_buf_putc(b, (char)c);
        } else if (c >= '\b' && c <= '\r' && c != '\v') {
            bt_buf_putc(b, '\\');
            bt_buf_putc(b, named[c - '\b']);
        } else {
            bt_buf_printf(b, "\\u%04x", c);
        }
        p = q + 1;
    }
    bt_buf_putc(b, '"');
}

/* n more bytes and the terminator fit in b (bt_buf_reserve's rule, its test inline:
 * the writer appends millions of short pieces) */
static inline void buf_room(struct bt_buf *b, size_t n)
{
    if (b->len + n + 1 > b->cap)
        bt_buf_reserve(b, n);
}

/* c appended to b, as bt_buf_putc */
static inline void buf_putc(struct bt_buf *b, char c)
{
    buf_room(b, 1);
    b->buf[b->len++] = c;
    b->buf[b->len] = '\0';
}

/* q / 10^d's digits with the point put in, its trailing zeros dropped; written
 * into one small buffer and appended once (a report prints millions) */
static void put_decimal(struct bt_buf *b, long long q, int d)
{
    static const char pairs[] = "00010203040506070809101112131415161718192021222324"
                                "25262728293031323334353637383940414243444546474849"
                                "50515253545556575859606162636465666768697071727374"
                                "75767778798081828384858687888990919293949596979899";
    char t[32];
    char *p = t + sizeof t; /* the digits, written from the last, two at a time */
    unsigned long long u = q < 0 ? 0ull - (unsigned long long)q : (unsigned long long)q;
    while (u >= 100) {
        unsigned r = (unsigned)(u % 100);
        u /= 100;
        p -= 2;
        memcpy(p, pairs + 2 * r, 2);
    }
    if (u >= 10) {
        p -= 2;
        memcpy(p, pairs + 2 * u, 2);
    } else {
        *--p = (char)('0' + u);
    }
    int n = (int)(t + sizeof t - p);
    for (; n <= d; n++)
        *--p = '0';
    int whole = n - d, frac = d; /* the fraction's trailing zeros dropped */
    while (frac > 0 && p[whole + frac - 1] == '0')
        frac--;
    buf_room(b, 40);
    char *o = b->buf + b->len;
    if (q < 0)
        *o++ = '-';
    for (int i = 0; i < whole; i++)
        *o++ = p[i];
    if (frac) {
        *o++ = '.';
        for (int i = 0; i < frac; i++)
            *o++ = p[whole + i];
    }
    *o = '\0';
    b->len = (size_t)(o - b->buf);
}

/* cJSON's print_number: null for NaN and infinities, else %1.15g when it reads
 * back (within DBL_EPSILON relative), else %1.17g, the locale's decimal point as
 * '.' (a whole number in int range is its digits there, written without printf). A value v that is exactly the
 * double nearest q / 10^d (d <= 6, 1e-4 <= |v|, |q| < 10^15) prints as q's digits:
 * %1.15g gives them (15 significant digits hold q; the exponent form starts below
 * 1e-4 or at 1e15) and they read back as v itself. */
static void put_number(struct bt_buf *b, double v, int valueint)
{
    if (isnan(v) || isinf(v)) {
        bt_buf_puts(b, "null");
        return;
    }
    if (v == (double)valueint && !(v == 0 && signbit(v))) { /* -0 stays "-0" */
        put_decimal(b, valueint, 0);
        return;
    }
    static const double p10[7] = {1, 10, 100, 1e3, 1e4, 1e5, 1e6};
    if (fabs(v) >= 1e-4 && fabs(v) < 1e15)
        for (int d = 0; d <= 6; d++) {
            double q = nearbyint(v * p10[d]);
            if (fabs(q) >= 1e15)
                break;
            if (q / p10[d] == v) {
                put_decimal(b, (long long)q, d);
                return;
            }
        }
    char n[32];
    double back = 0;
    snprintf(n, sizeof n, "%1.15g", v);
    if (sscanf(n, "%lg", &back) != 1 ||
        !(fabs(back - v) <= (fabs(back) > fabs(v) ? fabs(back) : fabs(v)) * DBL_EPSILON))
        snprintf(n, sizeof n, "%1.17g", v);
    char dp = localeconv()->decimal_point[0];
    for (char *c = n; *c; c++)
        if (*c == dp)
            *c = '.';
    bt_buf_puts(b, n);
}

static void put_tabs(struct bt_buf *b, int n)
{
    static const char tabs[] = "\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t";
    for (; n > 0; n -= 16)
        bt_buf_add(b, tabs, (size_t)(n < 16 ? n : 16));
}

/* cJSON's print_value: compact, or cJSON_Print's layout (pretty) for a value that
 * sits at `depth` of its tree (the root at 0): an object's members one a line, each
 * indented by depth + 1 tabs, its key, ':' and a tab; its '}' at depth tabs (so an
 * empty object is "{\n}" indented); an array's items on one line, ", " between. */
static void put_value(struct bt_buf *b, const cJSON *j, int depth, bool pretty,
                      const struct bt_json_piece *piece)
{
    if (!j)
        return;
    switch (j->type & 0xff) {
    case cJSON_NULL:
        bt_buf_puts(b, "null");
        return;
    case cJSON_False:
        bt_buf_puts(b, "false");
        return;
    case cJSON_True:
        bt_buf_puts(b, "true");
        return;
    case cJSON_Number:
        put_number(b, j->valuedouble, j->valueint);
        return;
    case cJSON_Raw:
        bt_buf_puts(b, j->valuestring ? j->valuestring : "");
        return;
    case cJSON_String:
        compact_string(b, j->valuestring);
        return;
    case cJSON_Array:
        bt_buf_putc(b, '[');
        for (const cJSON *c = j->child; c; c = c->next) {
            put_value(b, c, depth + 1, pretty, piece);
            if (c->next)
                bt_buf_add(b, ", ", pretty ? 2 : 1);
            if (piece)
                piece->done(piece->ctx, b);
        }
        bt_buf_putc(b, ']');
        return;
    case cJSON_Object:
        bt_buf_putc(b, '{');
        if (pretty)
            bt_buf_putc(b, '\n');
        for (const cJSON *c = j->child; c; c = c->next) {
            if (pretty)
                put_tabs(b, depth + 1);
            compact_string(b, c->string);
            bt_buf_add(b, ":\t", pretty ? 2 : 1);
            put_value(b, c, depth + 1, pretty, piece);
            if (c->next)
                bt_buf_putc(b, ',');
            if (pretty)
                bt_buf_putc(b, '\n');
            if (piece)
                piece->done(piece->ctx, b);
        }
        if (pretty)
            put_tabs(b, depth);
        bt_buf_putc(b, '}');
        return;
    default:
        return;
    }
}

void bt_buf_json_compact(struct bt_buf *b, const cJSON *j)
{
    put_value(b, j, 0, false, NULL);
}

void bt_buf_json_pretty(struct bt_buf *b, const cJSON *j, int depth)
{
    put_value(b, j, depth, true, NULL);
}

void bt_buf_json_member(struct bt_buf *b, const cJSON *m, int depth, const struct bt_json_piece *piece)
{
    put_tabs(b, depth);
    compact_string(b, m->string);
    bt_buf_add(b, ":\t", 2);
    put_value(b, m, depth, true, piece);
}

/* Blocks of at least 256 kB, each bump-allocated; a chain freed whole. */
struct arena_block {
    struct arena_block *next;
    size_t used, cap;
    alignas(max_align_t) unsigned char data[];
};
struct bt_json_arena {
    struct arena_block *head;
};

static struct bt_json_arena *arena_now; /* the arena the hooks allocate from */

static void *arena_malloc(size_t n)
{
    struct bt_json_arena *a = arena_now;
    size_t al = alignof(max_align_t);
    n = (n + al - 1) / al * al;
    struct arena_block *b = a->head;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > (256u << 10) ? n : (256u << 10);
        b = malloc(sizeof *b + cap);
        if (!b)
            return NULL; /* cJSON says the parse failed: the caller's out-of-memory rule */
        b->next = a->head;
        b->used = 0;
        b->cap = cap;
        a->head = b;
    }
    void *p = b->data + b->used;
    b->used += n;
    return p;
}

static void arena_free(void *p)
{
    (void)p; /* the arena is freed whole */
}

struct bt_json_arena *bt_json_arena_begin(void)
{
    struct bt_json_arena *a = bt_xcalloc(1, sizeof *a);
    cJSON_Hooks h = {arena_malloc, arena_free};
    arena_now = a;
    cJSON_InitHooks(&h);
    return a;
}

void bt_json_arena_end(void)
{
    cJSON_InitHooks(NULL);
    arena_now = NULL;
}

cJSON *bt_json_parse_arena(const char *text, size_t len, struct bt_json_arena **arena)
{
    struct bt_json_arena *a = bt_json_arena_begin();
    cJSON *root = cJSON_ParseWithLength(text, len);
    bt_json_arena_end();
    if (!root) {
        bt_json_arena_free(a);
        a = NULL;
    }
    *arena = a;
    return root;
}

void bt_json_arena_reset(struct bt_json_arena *a)
{
    if (!a || !a->head)
        return;
    /* the newest block stays (a tree that fit once fits again), the rest go */
    for (struct arena_block *b = a->head->next, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    a->head->next = NULL;
    a->head->used = 0;
}

void bt_json_arena_free(struct bt_json_arena *a)
{
    if (!a)
        return;
    for (struct arena_block *b = a->head, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    free(a);
}

/* cJSON_SetNumberHelper's valueint: v saturated to int's range */
static int number_int(double v)
{
    if (v >= INT_MAX)
        return INT_MAX;
    if (v <= (double)INT_MIN)
        return INT_MIN;
    return (int)v;
}

void bt_jw_tree(struct bt_jw *w, cJSON *o)
{
    memset(w, 0, sizeof *w);
    w->open[0] = o;
}

void bt_jw_text(struct bt_jw *w, struct bt_buf *b)
{
    memset(w, 0, sizeof *w);
    w->b = b;
    w->shut[0] = '}';
    bt_buf_putc(b, '{');
}

/* Whether the 8 bytes of x hold one outside the plain run: below ' ' (the
 * terminator and the control characters), above '~', '"' or '\\' (each test is
 * exact for "some byte", the bit tricks of Sean Anderson's bithacks: haszero,
 * hasless and hasmore). */
static inline bool word_stops(uint64_t x)
{
    const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
    uint64_t quote = x ^ (ones * '"'), bslash = x ^ (ones * '\\');
    uint64_t low = (x - ones * ' ') & ~x;                    /* a byte < 0x20 */
    uint64_t high = (x + ones * (127 - '~')) | x;             /* a byte > 0x7e */
    uint64_t q = (quote - ones) & ~quote, s = (bslash - ones) & ~bslash;
    return ((low | high | q | s) & highs) != 0;
}

/* The length of s when every byte of it is plain (printable ASCII but '"' and
 * '\\'), else SIZE_MAX: strlen first, then eight bytes at a time, the last word
 * overlapping the one before it and a short string's bytes put together into one
 * (a test a byte at a time was 11 % of a JSON export; keys average a dozen bytes).
 * Nothing past the terminator is read. */
static size_t plain_len(const char *s)
{
    size_t n = strlen(s);
    uint64_t x;
    if (n >= 8) {
        for (size_t i = 0; i + 8 < n; i += 8) {
            memcpy(&x, s + i, 8);
            if (word_stops(x))
                return SIZE_MAX;
        }
        memcpy(&x, s + n - 8, 8);
    } else if (n >= 4) {
        uint32_t lo, hi;
        memcpy(&lo, s, 4);
        memcpy(&hi, s + n - 4, 4);
        x = (uint64_t)lo | (uint64_t)hi << 32;
    } else if (n) {
        /* bytes 0, n / 2 and n - 1 are every byte of a string of 1 to 3; the rest 'a' */
        const unsigned char *p = (const unsigned char *)s;
        x = 0x6161616161000000u | (uint64_t)p[0] | (uint64_t)p[n / 2] << 8 |
            (uint64_t)p[n - 1] << 16;
    } else {
        return 0;
    }
    return word_stops(x) ? SIZE_MAX : n;
}

/* text_string's escaping and sanitising way, for the rare string that is not plain:
 * kept out of line so the plain way saves no registers for it */
__attribute__((noinline, cold)) static void text_string_escaped(struct bt_buf *b, char pre,
                                                                const char *s, char post)
{
    struct bt_buf t = {0};
    compact_string(&t, s);
    if (pre)
        bt_buf_putc(b, pre);
    bt_san_json_text(b, bt_buf_str(&t));
    if (post)
        bt_buf_putc(b, post);
    bt_buf_free(&t);
}

/* text: s as compact_string writes it, sanitised as bt_san_json_text would have it
 * (the text around strings is ASCII, which it keeps), between pre and post (0:
 * none). A plain string (printable ASCII without '"' and '\\': nearly every key and
 * value) is copied at once, the rest escaped and sanitised through a scratch. */
static inline void text_string(struct bt_buf *b, char pre, const char *s, char post)
{
    size_t n = plain_len(s);
    if (n == SIZE_MAX) {
        text_string_escaped(b, pre, s, post);
        return;
    }
    buf_room(b, n + 4);
    char *d = b->buf + b->len;
    if (pre)
        *d++ = pre;
    *d++ = '"';
    memcpy(d, s, n);
    d += n;
    *d++ = '"';
    if (post)
        *d++ = post;
    *d = '\0';
    b->len = (size_t)(d - b->buf);
}

/* text: the comma before a member or item and its key */
static void jw_key(struct bt_jw *w, const char *k)
{
    char comma = w->more[w->depth] ? ',' : 0;
    w->more[w->depth] = true;
    if (k)
        text_string(w->b, comma, k, ':');
    else if (comma)
        buf_putc(w->b, comma);
}

/* tree: item added to the open object or array (cJSON_AddItemToObject's rule: a
 * NULL item, which a failed allocation returns, adds nothing) */
static void jw_add(struct bt_jw *w, const char *k, cJSON *item)
{
    if (!item)
        return;
    if (k)
        cJSON_AddItemToObject(w->open[w->depth], k, item);
    else
        cJSON_AddItemToArray(w->open[w->depth], item);
}

static void jw_open(struct bt_jw *w, const char *k, bool array)
{
    if (w->lost || w->depth + 1 >= BT_JW_DEPTH) {
        w->lost++; /* deeper than bedtop's objects nest: dropped whole, never a crash */
        return;
    }
    if (w->b) {
        jw_key(w, k);
        buf_putc(w->b, array ? '[' : '{');
        w->more[++w->depth] = false;
        w->shut[w->depth] = array ? ']' : '}';
        return;
    }
    cJSON *c = array ? cJSON_CreateArray() : cJSON_CreateObject();
    if (!c)
        bt_out_of_memory();
    jw_add(w, k, c);
    w->open[++w->depth] = c;
}

void bt_jw_obj(struct bt_jw *w, const char *k)
{
    jw_open(w, k, false);
}

void bt_jw_arr(struct bt_jw *w, const char *k)
{
    jw_open(w, k, true);
}

void bt_jw_end(struct bt_jw *w)
{
    if (w->lost) {
        w->lost--;
        return;
    }
    if (w->b)
        buf_putc(w->b, w->shut[w->depth]);
    if (w->depth > 0)
        w->depth--;
}

/* One value: what cJSON_Create* of its kind makes, added to the tree, or its text
 * after the comma and the key (each of bt_jw_num, _str, _null and _bool is one) */
enum jw_kind { JW_NUM, JW_STR, JW_NULL, JW_BOOL };
static void jw_value(struct bt_jw *w, const char *k, enum jw_kind kind, double v, const char *s)
{
    if (w->lost)
        return;
    if (!w->b) {
        jw_add(w, k, kind == JW_NUM ? cJSON_CreateNumber(v)
                     : kind == JW_STR ? cJSON_CreateString(s)
                     : kind == JW_NULL ? cJSON_CreateNull()
                                       : cJSON_CreateBool(v != 0));
        return;
    }
    jw_key(w, k);
    switch (kind) {
    case JW_NUM:
        put_number(w->b, v, isnan(v) ? 0 : number_int(v));
        break;
    case JW_STR:
        text_string(w->b, 0, s, 0);
        break;
    case JW_NULL:
        bt_buf_add(w->b, "null", 4);
        break;
    case JW_BOOL:
        bt_buf_puts(w->b, v != 0 ? "true" : "false");
        break;
    }
}

void bt_jw_num(struct bt_jw *w, const char *k, double v)
{
    jw_value(w, k, JW_NUM, v, NULL);
}

void bt_jw_str(struct bt_jw *w, const char *k, const char *v)
{
    if (v) /* cJSON_AddStringToObject's rule: no string, no member */
        jw_value(w, k, JW_STR, 0, v);
}

void bt_jw_null(struct bt_jw *w, const char *k)
{
    jw_value(w, k, JW_NULL, 0, NULL);
}

void bt_jw_bool(struct bt_jw *w, const char *k, bool v)
{
    jw_value(w, k, JW_BOOL, v, NULL);
}

void bt_jw_round(struct bt_jw *w, const char *k, double v, int decimals)
{
    if (isnan(v) || isinf(v))
        bt_jw_null(w, k);
    else
        bt_jw_num(w, k, bt_round_to(v, decimals));
}

void bt_jw_str_or_null(struct bt_jw *w, const char *k, const char *v)
{
    if (v && *v)
        bt_jw_str(w, k, v);
    else
        bt_jw_null(w, k);
}

void bt_jw_time(struct bt_jw *w, const char *k, int64_t t)
{
    /* the last instants written, by minute, in the caller's cache: export writes the
     * same few minutes for every route of a row (strftime was 2 % of a JSON export) */
    if (!t) {
        bt_jw_null(w, k);
        return;
    }
    if (!w->times) {
        char iso[32];
        bt_fmt_iso(t, iso, sizeof iso);
        bt_jw_str_or_null(w, k, iso);
        return;
    }
    unsigned slot = (unsigned)((uint64_t)t / 60 % 8);
    struct bt_jw_times *c = w->times;
    if (c->seen[slot].t != t || !c->seen[slot].iso[0]) {
        c->seen[slot].t = t;
        bt_fmt_iso(t, c->seen[slot].iso, sizeof c->seen[slot].iso);
    }
    bt_jw_str_or_null(w, k, c->seen[slot].iso);
}

void bt_json_add_round(cJSON *o, const char *k, double v, int decimals)
{
    struct bt_jw w;
    bt_jw_tree(&w, o);
    bt_jw_round(&w, k, v, decimals);
}

void bt_json_add_str(cJSON *o, const char *k, const char *v)
{
    struct bt_jw w;
    bt_jw_tree(&w, o);
    bt_jw_str_or_null(&w, k, v);
}

void bt_json_add_time(cJSON *o, const char *k, int64_t t)
{
    struct bt_jw w;
    bt_jw_tree(&w, o);
    bt_jw_time(&w, k, t);
}
