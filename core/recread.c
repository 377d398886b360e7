/* The recording reader and its index (man 5 bedtop-recording): the header
 * becomes a config, every poll line feeds the store (keeping each sample's
 * arrival; core/recload.c reads what a line says), and the poll times and
 * markers make seeking a binary search. */
#include "core/recording.h"

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/recfmt.h"
#include "core/util.h"

/* Lines of a recording in memory (bt_replay_open_mem); io/recfile.c reads a file. */
struct mem_lines {
    const char *mem;
    size_t len, pos;
    char *buf;
    size_t cap;
};

static int mem_next(void *arg, char **line, size_t *n)
{
    struct mem_lines *ls = arg;
    if (ls->pos >= ls->len)
        return 0;
    const char *p = ls->mem + ls->pos;
    const char *e = memchr(p, '\n', ls->len - ls->pos);
    size_t k = e ? (size_t)(e - p) : ls->len - ls->pos;
    if (k + 1 > ls->cap) {
        ls->cap = k + 1;
        ls->buf = bt_xrealloc(ls->buf, ls->cap);
    }
    memcpy(ls->buf, p, k);
    ls->buf[k] = '\0';
    ls->pos += k + (e ? 1 : 0);
    *line = ls->buf;
    *n = k;
    return e ? 1 : 2;
}

static int mem_rewind(void *arg)
{
    struct mem_lines *ls = arg;
    ls->pos = 0;
    return 0;
}

/* A note about the file that is not a skipped line: said through warn. */
static void note(void (*warn)(void *, const char *), void *warn_arg, const char *msg)
{
    if (warn)
        warn(warn_arg, msg);
}

/* The recording's window is its own polls (issue 37: a 1.7 kB file whose header
 * said "created":"1970-01-01T00:01:00Z" made export and report incident walk every
 * minute since 1970). The header's created time says when the recorder started,
 * which is shortly before its first poll (a first poll takes up to an interval and
 * the lag): it starts the window only within BT_REC_START_SLACK of that poll. One
 * earlier is a note, never a window: the recording starts at its first poll. An
 * event after the last poll (a reply that came in after it, written in the final
 * line) extends the end by at most BT_REC_EVENT_SLACK; a later one is kept but
 * does not stretch the window either. */
#define BT_REC_START_SLACK 600
#define BT_REC_EVENT_SLACK 3600
static void bound_window(struct bt_replay *rp, const char *path,
                         void (*warn)(void *, const char *), void *warn_arg)
{
    char msg[300], a[32], b[32];
    if (!rp->npolls) {
        rp->end = 0;
        return;
    }
    int64_t first = rp->polls[0], last = rp->polls[rp->npolls - 1];
    if (rp->start && rp->start < first - BT_REC_START_SLACK) {
        bt_fmt_iso(rp->start, a, sizeof a);
        bt_fmt_iso(first, b, sizeof b);
        snprintf(msg, sizeof msg,
                 "%s:1: header says created %s, long before the first poll (%s); the "
                 "recording starts at its first poll", path, a, b);
        note(warn, warn_arg, msg);
        rp->start = first;
    }
    if (!rp->start || rp->start > first)
        rp->start = first;
    /* polls further apart than the store holds (BT_REC_MAX_SPAN_DAYS, as history's
     * most): the older minutes would show nothing, and walking them is what took
     * hours; the window is the newest part, said so */
    if (last - rp->start > (int64_t)BT_REC_MAX_SPAN_DAYS * 86400) {
        size_t i = bt_replay_poll_at(rp, last - (int64_t)BT_REC_MAX_SPAN_DAYS * 86400);
        if (rp->polls[i] < last - (int64_t)BT_REC_MAX_SPAN_DAYS * 86400)
            i++;
        bt_fmt_iso(rp->start, a, sizeof a);
        bt_fmt_iso(rp->polls[i], b, sizeof b);
        snprintf(msg, sizeof msg,
                 "%s: its polls span more than %d days (from %s); the last %d are replayed, "
                 "from %s", path, BT_REC_MAX_SPAN_DAYS, a, BT_REC_MAX_SPAN_DAYS, b);
        note(warn, warn_arg, msg);
        rp->start = rp->polls[i];
    }
    rp->end = last;
    if (rp->last_event > last && rp->last_event <= last + BT_REC_EVENT_SLACK) {
        rp->end = rp->last_event; /* --at -0s shows what the recording ends with */
    } else if (rp->last_event > last) {
        bt_fmt_iso(rp->last_event, a, sizeof a);
        bt_fmt_iso(last, b, sizeof b);
        snprintf(msg, sizeof msg,
                 "%s: an event at %s is more than an hour after the last poll (%s); the "
                 "recording ends at its last poll", path, a, b);
        note(warn, warn_arg, msg);
    }
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The arrivals ascending, once each. */
static void arrivals_sort(struct bt_replay *rp)
{
    if (!rp->narrivals)
        return; /* none (a header alone): no array, and qsort must not be handed NULL */
    qsort(rp->arrivals, rp->narrivals, sizeof *rp->arrivals, cmp_i64);
    size_t u = 0;
    for (size_t i = 0; i < rp->narrivals; i++)
        if (!u || rp->arrivals[i] != rp->arrivals[u - 1])
            rp->arrivals[u++] = rp->arrivals[i];
    rp->narrivals = u;
}

/* One line's scan by the first pass, its pointers as offsets into the line (0: none;
 * the line's first byte is its '{'), so that the second pass reads the samples without
 * validating them again: every sample line was scanned three times, for the span, to
 * validate and to store (18 % of an export's instructions). */
enum { LINE_PTRS = 9 };
struct scanned {
    size_t len;
    bool ok;
    double t;
    size_t off[LINE_PTRS];
};

#define LINE_FIELD(f) offsetof(struct bt_rec_line, f)
static const size_t line_fields[LINE_PTRS] = {
    LINE_FIELD(s), LINE_FIELD(e), LINE_FIELD(e_end), LINE_FIELD(c), LINE_FIELD(c_end),
    LINE_FIELD(k), LINE_FIELD(k_end), LINE_FIELD(v), LINE_FIELD(v_end),
};
#undef LINE_FIELD

/* the j-th pointer of a scanned line (a table of its fields, not an array of their
 * addresses built at every call: two passes over every line ask it 9 times each) */
static const char **line_ptr(struct bt_rec_line *pl, int j)
{
    return (const char **)(void *)((char *)pl + line_fields[j]);
}

static void scanned_keep(struct scanned *sc, struct bt_rec_line *pl, const char *line)
{
    sc->t = pl->t;
    for (int j = 0; j < LINE_PTRS; j++) {
        const char *p = *line_ptr(pl, j);
        sc->off[j] = p ? (size_t)(p - line) : 0;
    }
}

static void scanned_line(const struct scanned *sc, struct bt_rec_line *pl, const char *line)
{
    *pl = (struct bt_rec_line){.t = sc->t};
    for (int j = 0; j < LINE_PTRS; j++)
        *line_ptr(pl, j) = sc->off[j] ? line + sc->off[j] : NULL;
}

/* The one reader behind bt_replay_open_lines. */
static bool replay_open_src(struct bt_replay *rp, const char *path, const struct bt_rec_lines *ls,
                            void (*warn)(void *, const char *), void *warn_arg, char *err,
                            size_t errlen)
{
    char *line;
    size_t len;
    int sigmap[256];
    if (ls->next(ls->arg, &line, &len) != 1) {
        snprintf(err, errlen, "%s: empty recording (no complete header line)", path);
        return false;
    }
    if (!bt_rec_parse_header(rp, line, sigmap, err, errlen))
        return false;
    rp->base = bt_xcalloc((size_t)(rp->cfg.nroutes ? rp->cfg.nroutes : 1), sizeof *rp->base);
    memcpy(rp->base, rp->cfg.routes, (size_t)rp->cfg.nroutes * sizeof *rp->base);
    bt_burndown_free(&rp->cfg.burndown);
    bt_burndown_add(&rp->cfg.burndown, "*", 1, -1, "recording"); /* burndown comes from the header */

    /* First pass: the minutes the samples span, to size the store to them
     * (demo and backfill recordings start with history before the first poll). */
    struct bt_rec_span span = {0};
    int64_t first = 0, last = 0;
    int kind;
    struct scanned *seen = NULL; /* each line's scan, for the second pass */
    size_t nseen = 0, capseen = 0;
    for (kind = ls->next(ls->arg, &line, &len); kind == 1; kind = ls->next(ls->arg, &line, &len)) {
        struct bt_rec_line pl;
        char why[160];
        if (nseen == capseen) {
            capseen = capseen ? capseen * 2 : 1024;
            seen = bt_xrealloc(seen, capseen * sizeof *seen);
        }
        struct scanned *sc = &seen[nseen++];
        sc->len = len;
        sc->ok = bt_rec_scan_line(line, rp->cfg.nroutes, sigmap, &pl, &span, why, sizeof why);
        if (!sc->ok)
            continue;
        scanned_keep(sc, &pl, line);
        int64_t t;
        if (!bt_rec_time(pl.t, &t) || t <= 0)
            continue; /* a pre-2.0 closing line (below) */
        if (!first || t < first)
            first = t;
        if (t > last)
            last = t;
    }
    int64_t lo = span.min && span.min < first ? span.min : first;
    int64_t hi = span.max > last ? span.max : last;
    /* a margin of an hour: views look a little past the newest minute */
    int64_t span_min = first ? (hi - lo) / 60 + 1 + 60 : 1440;
    if (span_min > BT_REC_MAX_SPAN_DAYS * 1440)
        span_min = BT_REC_MAX_SPAN_DAYS * 1440;
    rp->cfg.history_minutes = (int)span_min;
    bt_store_init(&rp->store, rp->cfg.nroutes, (int)span_min);
    bt_store_track_arrival(&rp->store);
    bt_store_bind_routes(&rp->store, rp->cfg.routes);
    int rc = ls->rewind(ls->arg);
    if (rc) {
        snprintf(err, errlen, "%s: %s", path, strerror(rc));
        return false;
    }
    ls->next(ls->arg, &line, &len); /* the header again */

    int lineno = 1;
    size_t cap = 0;
    for (kind = ls->next(ls->arg, &line, &len); kind != 0; kind = ls->next(ls->arg, &line, &len)) {
        lineno++;
        char why[160];
        bool truncated = kind == 2;
        struct bt_rec_line pl;
        bool blank = !len;
        /* a line the first pass found valid is not validated again (the same line: its
         * length agrees; a line that grew or failed is scanned again, for its reason) */
        size_t i = (size_t)(lineno - 2);
        bool known = !truncated && i < nseen && seen[i].ok && seen[i].len == len;
        if (known)
            scanned_line(&seen[i], &pl, line);
        if (!blank && !truncated &&
            (known || bt_rec_scan_line(line, rp->cfg.nroutes, sigmap, &pl, NULL, why, sizeof why))) {
            const char *end;
            if (pl.s)
                bt_rec_scan_samples(rp, rp->cfg.nroutes, sigmap, pl.s, &end, NULL);
            if (pl.k) {
                cJSON *k = cJSON_ParseWithLength(pl.k, (size_t)(pl.k_end - pl.k));
                bt_rec_load_series(rp, k);
                cJSON_Delete(k);
            }
            if (pl.c) {
                cJSON *c = cJSON_ParseWithLength(pl.c, (size_t)(pl.c_end - pl.c));
                bt_rec_load_readings(rp, c, sigmap);
                cJSON_Delete(c);
            }
            if (pl.v) {
                cJSON *v = cJSON_ParseWithLength(pl.v, (size_t)(pl.v_end - pl.v));
                bt_rec_load_coverage(rp, v, sigmap);
                cJSON_Delete(v);
            }
            if (pl.e) {
                cJSON *e = cJSON_ParseWithLength(pl.e, (size_t)(pl.e_end - pl.e));
                bt_rec_load_events(rp, e);
                cJSON_Delete(e);
            }
            if (rp->npolls == cap) {
                cap = cap ? cap * 2 : 1024;
                rp->polls = bt_xrealloc(rp->polls, cap * sizeof *rp->polls);
            }
            /* a line at t 0 is what the dashboard and serve wrote when they stopped,
             * before 2.0: its samples and events count, its time is not a poll's
             * (a replay started in 1970) */
            int64_t t;
            if (bt_rec_time(pl.t, &t) && t > 0)
                rp->polls[rp->npolls++] = t;
        } else if (!blank) {
            char msg[300];
            snprintf(msg, sizeof msg, "%s:%d: %s; line skipped", path, lineno,
                     truncated ? "truncated last line (recording interrupted?)" : why);
            if (!rp->skipped)
                bt_strlcpy(rp->first_problem, msg, sizeof rp->first_problem);
            rp->skipped++;
            if (warn)
                warn(warn_arg, msg);
        }
        if (truncated)
            break;
    }
    free(seen);
    /* polls are written in order; sort defensively for binary search */
    for (size_t i = 1; i < rp->npolls; i++) {
        int64_t v = rp->polls[i];
        size_t j = i;
        while (j > 0 && rp->polls[j - 1] > v) {
            rp->polls[j] = rp->polls[j - 1];
            j--;
        }
        rp->polls[j] = v;
    }
    bound_window(rp, path, warn, warn_arg);
    arrivals_sort(rp);
    bt_store_share_arrivals(&rp->store); /* every sample is in: a route's lines agree */
    rp->store.tap = (struct bt_store_tap){0};
    bt_replay_seek(rp, rp->end);
    return true;
}

bool bt_replay_open_lines(struct bt_replay *rp, const char *name, const struct bt_rec_lines *src,
                          void (*warn)(void *, const char *), void *warn_arg, char *err,
                          size_t errlen)
{
    memset(rp, 0, sizeof *rp);
    bt_strlcpy(rp->path, name, sizeof rp->path);
    bt_strlcpy(rp->mode, "live", sizeof rp->mode);
    bt_config_defaults(&rp->cfg);
    bool ok = replay_open_src(rp, name, src, warn, warn_arg, err, errlen);
    if (!ok)
        bt_replay_free(rp);
    return ok;
}

bool bt_replay_open_mem(struct bt_replay *rp, const char *name, const char *data, size_t len,
                        void (*warn)(void *, const char *), void *warn_arg, char *err,
                        size_t errlen)
{
    struct mem_lines ls = {.mem = data, .len = len};
    struct bt_rec_lines src = {.next = mem_next, .rewind = mem_rewind, .arg = &ls};
    bool ok = bt_replay_open_lines(rp, name, &src, warn, warn_arg, err, errlen);
    free(ls.buf);
    return ok;
}

/* t clamped to the recording (a seek's instant) */
static int64_t inside(const struct bt_replay *rp, int64_t t)
{
    return t < rp->start ? rp->start : t > rp->end ? rp->end : t;
}

void bt_replay_seek(struct bt_replay *rp, int64_t t)
{
    t = inside(rp, t);
    bt_store_set_horizon(&rp->store, rp->cfg.routes, rp->base, t ? t : 1);
}

void bt_replay_cursor_open(struct bt_replay_cursor *c, const struct bt_replay *rp)
{
    memset(c, 0, sizeof *c);
    c->rp = rp;
    c->cfg = rp->cfg;
    size_t n = (size_t)(rp->cfg.nroutes > 0 ? rp->cfg.nroutes : 0);
    c->cfg.routes = bt_xcalloc(n ? n : 1, sizeof *c->cfg.routes);
    if (n)
        memcpy(c->cfg.routes, rp->cfg.routes, n * sizeof *c->cfg.routes);
    bt_store_view(&c->store, &rp->store);
    bt_store_bind_routes(&c->store, c->cfg.routes);
}

void bt_replay_cursor_seek(struct bt_replay_cursor *c, int64_t t)
{
    t = inside(c->rp, t);
    bt_store_set_horizon(&c->store, c->cfg.routes, c->rp->base, t ? t : 1);
    c->at = t;
}

void bt_replay_cursor_close(struct bt_replay_cursor *c)
{
    bt_store_free(&c->store);
    free(c->cfg.routes);
    memset(c, 0, sizeof *c);
}

/* The index of the first of n ascending times after t (n: none); the times are the
 * int64_t at offset off of each of n elements of size bytes from base (an int64_t
 * array: size 8, off 0; the event log: its .t). */
static size_t first_after(const void *base, size_t n, size_t size, size_t off, int64_t t)
{
    const char *p = base;
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (*(const int64_t *)(const void *)(p + mid * size + off) <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

size_t bt_replay_poll_at(const struct bt_replay *rp, int64_t t)
{
    size_t lo = first_after(rp->polls, rp->npolls, sizeof *rp->polls, 0, t);
    return lo ? lo - 1 : 0;
}

void bt_replay_free(struct bt_replay *rp)
{
    bt_store_free(&rp->store);
    bt_config_free(&rp->cfg);
    free(rp->base);
    free(rp->polls);
    free(rp->markers);
    for (size_t i = 0; i < rp->nseries; i++)
        free(rp->series[i]);
    free(rp->series);
    free(rp->arrivals);
    memset(rp, 0, sizeof *rp);
}

bool bt_replay_quiet(const struct bt_replay *rp, int64_t from, int64_t to)
{
    const struct bt_store *st = &rp->store;
    if (from >= to || !st->hz_sorted)
        return false;
    /* the first arrival after from, and the first event */
    size_t a = first_after(rp->arrivals, rp->narrivals, sizeof *rp->arrivals, 0, from);
    if (a < rp->narrivals && rp->arrivals[a] <= to)
        return false;
    size_t e = first_after(st->log, st->nlog, sizeof *st->log, offsetof(struct bt_event, t), from);
    return !(e < st->nlog && st->log[e].t <= to);
}

bool bt_replay_when(const struct bt_replay *rp, const char *s, int64_t *out)
{
    return bt_parse_when(s, rp->start, rp->end, s[0] == '+' ? rp->start : rp->end, out);
}
