/* bedtop replay and bedtop export: recordings read back. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "app/app.h"
#include "app/replay_view.h"
#include "collectors/admission.h"
#include "collectors/cloudwatch.h"
#include "collectors/demo.h"
#include "net/http.h"
#include "net/loop.h"
#include "collectors/quotas.h"
#include "core/dataminute.h"
#include "core/events.h"
#include "core/figures.h"
#include "core/json.h"
#include "core/recording.h"
#include "core/shares.h"
#include "core/format.h"
#include "render/csv.h"
#include "render/report.h"
#include "core/sanitize.h"
#include "core/util.h"
#include "io/file.h"
#include "io/recfile.h"

/* replay's and export's own options (app/app.h APP_OPT_FIELD, APP_OPT_ROW); both read the
 * recording FILE */
#define REPLAY_OPTIONS(X, T)                                                                 \
    X(T, STR, format, "format")         /* --at: text or json */                             \
    X(T, STR, at, "at")                 /* MINUTE: print that minute's report */             \
    X(T, LIST, routes, "route")         /* --at: routes[], nroutes; none: every route */     \
    X(T, FLAG, wide, "wide")                                                                 \
    X(T, STR, unknown_as, "unknown-as") /* --at: how an unknown route counts (NULL: warn) */
struct replay_opts {
    APP_OPTS_COMMON;
    REPLAY_OPTIONS(APP_OPT_FIELD, struct replay_opts)
};
#define EXPORT_OPTIONS(X, T)                                                                 \
    X(T, STR, format, "format")                                                              \
    X(T, STR, since, "since")   /* --source: the window read from Prometheus */              \
    X(T, STR, from, "from")     /* data minutes from T ... */                                \
    X(T, STR, to, "to")         /* ... to T */                                               \
    X(T, LIST, routes, "route") /* routes[], nroutes; none: every route */                   \
    X(T, STR, output, "output") /* write here (0600) instead of stdout */
struct export_opts {
    APP_OPTS_COMMON;
    EXPORT_OPTIONS(APP_OPT_FIELD, struct export_opts)
};

APP_CMD_EXEC(cmd_replay, struct replay_opts)
static const struct bt_cmd_opt replay_options[] = {
    BT_OPT_STR("theme", struct replay_opts, theme),
    BT_OPT_FLAG("no-color", struct replay_opts, no_color),
    BT_OPT_FLAG("ascii", struct replay_opts, ascii),
    REPLAY_OPTIONS(APP_OPT_ROW, struct replay_opts)
};
const struct bt_cmd_entry bt_cmd_replay_entry = {
    .name = "replay",
    .usage = "replay FILE [--at MINUTE [-f text|json] [--route R]... [--wide]]",
    .summary = "opens a recording in the dashboard with time controls; --at MINUTE prints\n"
               "the report of that data minute instead, with check's exit codes",
    .opts = replay_options, .nopts = BT_ARRAY_LEN(replay_options),
    .size = sizeof(struct replay_opts), .exec = cmd_replay_exec,
};

APP_CMD_EXEC(cmd_export, struct export_opts)
static const struct bt_cmd_opt export_options[] = {
    BT_OPT_STR("config", struct export_opts, config),
    APP_OPTS_SOURCE(struct export_opts),
    EXPORT_OPTIONS(APP_OPT_ROW, struct export_opts)
};
const struct bt_cmd_entry bt_cmd_export_entry = {
    .name = "export",
    .usage = "export FILE [-f csv|json] [--from T] [--to T] [--route R] [-o F]",
    .summary = "writes one row per route and data minute of a recording, as CSV or JSON\n"
               "(--source: of the series read from Prometheus instead)",
    .opts = export_options, .nopts = BT_ARRAY_LEN(export_options),
    .size = sizeof(struct export_opts), .exec = cmd_export_exec,
};

static void replay_warn(void *arg, const char *msg)
{
    (void)arg;
    bt_err("%s", msg);
}

static bool open_recording(const struct app_opts *o, struct bt_replay *rp, const char *cmd)
{
    char err[4608]; /* the whole path and reason, never cut */
    if (!o->file) {
        bt_err("%s: which recording?; use bedtop %s FILE", cmd, cmd);
        return false;
    }
    struct stat st;
    if (stat(o->file, &st) == 0 && S_ISDIR(st.st_mode)) {
        bt_err("%s: %s is a directory; give a recording file (made by bedtop record)", cmd,
               o->file);
        return false;
    }
    if (!bt_replay_open(rp, o->file, replay_warn, NULL, err, sizeof err)) {
        app_file_error(err, o->file, "recording", false);
        return false;
    }
    if (!rp->npolls) {
        bt_err("%s: no polls recorded; record for at least one poll interval", o->file);
        bt_replay_free(rp);
        return false;
    }
    return true;
}

static void add_iso(cJSON *o, const char *name, int64_t t)
{
    char iso[32];
    bt_fmt_iso(t, iso, sizeof iso);
    cJSON_AddStringToObject(o, name, iso);
}

/* The recording's data minutes, as every range error names them. */
static void span_text(const struct bt_replay *rp, char *out, size_t n)
{
    char b[32], c[32];
    int64_t first, last;
    bt_replay_minutes(rp, &first, &last);
    bt_fmt_iso(first, b, sizeof b);
    bt_fmt_iso(last, c, sizeof c);
    snprintf(out, n, "data minutes %s to %s", b, c);
}

static bool when(const struct bt_replay *rp, const char *what, const char *s, int64_t *out)
{
    if (!bt_replay_when_minute(rp, s, out)) {
        char span[96];
        span_text(rp, span, sizeof span);
        bt_err("%s: '%s' is not a time; use 14:32, +5m (after the first data minute), -30m "
               "(before the last) or 2026-11-29T14:32:00Z (this recording has %s)", what, s,
               span);
        return false;
    }
    return true;
}

static void log_json(cJSON *mk, cJSON *ev, const struct bt_replay *rp, const struct bt_evlog *log,
                     const bool *keep, int64_t from, int64_t to);

/* replay --at T: the screen as it was when data minute T was the newest complete
 * one, the same moment as export's row of T (core/dataminute.h). */
static int replay_print(struct replay_opts *o, struct bt_replay *rp)
{
    enum bt_format fmt = BT_FMT_TEXT;
    if (o->format && !bt_format_parse(o->format, &fmt)) {
        bt_err("replay --format: '%s' is not a format; use text, json or prometheus", o->format);
        return 3;
    }
    if (o->wide && fmt != BT_FMT_TEXT) {
        bt_err("--wide: applies to --format text only (%s has every field already)", o->format);
        return 3;
    }
    int64_t m, first, last;
    if (!when(rp, "--at", o->at, &m))
        return 3;
    bt_replay_minutes(rp, &first, &last);
    if (m < first || m > last) {
        char a[32], span[96];
        bt_fmt_iso(m, a, sizeof a);
        span_text(rp, span, sizeof span);
        bt_err("--at %s is outside the recording (%s); pick a minute inside it", a, span);
        return 3;
    }
    bool *keep = NULL;
    if (!app_select_routes(o->routes, o->nroutes, &rp->cfg, &keep))
        return 3;
    /* JSON carries minute T's markers and events, as export's row of T does (the log
     * of that minute alone, walked by the log's own cursor) */
    struct bt_evlog log = {0};
    if (fmt == BT_FMT_JSON) {
        bt_evlog_init(&log, rp->cfg.nroutes);
        bt_evlog_from_replay_window(&log, rp, m, m);
    }
    int64_t t = bt_replay_minute_instant(rp, m);
    bt_replay_seek(rp, t);
    struct bt_report rep;
    bt_report_build(&rep, &rp->cfg, &rp->store, t);
    bt_report_select(&rep, keep, app_unknown_as(o->unknown_as));
    bt_report_decide(&rep); /* as check: the forecast and the observed ceiling */
    rep.mode = "replay";
    rep.recorded_mode = rp->mode; /* compared or JSON-escaped, never printed raw */
    rep.wide = o->wide;
    bool color = fmt == BT_FMT_TEXT && !o->no_color && isatty(STDOUT_FILENO) && !getenv("NO_COLOR");
    struct bt_buf out = {0};
    if (fmt == BT_FMT_JSON) {
        cJSON *j = bt_report_json(&rep);
        cJSON *mk = cJSON_AddArrayToObject(j, "markers"); /* in this order: the shape */
        log_json(mk, cJSON_AddArrayToObject(j, "events"), rp, &log, keep, m, m);
        char *s = bt_json_print(j, true);
        bt_san_json_text(&out, s);
        bt_buf_putc(&out, '\n');
        cJSON_free(s);
        cJSON_Delete(j);
        bt_evlog_free(&log);
    } else {
        bt_report_render(&rep, fmt, color, &out);
    }
    if (fmt == BT_FMT_TEXT && !rp->has_admission)
        bt_buf_puts(&out, "\nnote: this recording has no admission counters (backfilled or none "
                          "configured)\n");
    /* a write error (a full disk, a closed pipe: >/dev/full) is an error, as coreutils say */
    struct app_output w;
    app_output_open(&w, NULL);
    fwrite(out.buf, 1, out.len, w.f);
    int rc = app_output_close(&w) ? bt_status_exit(rep.status) : 3;
    bt_buf_free(&out);
    bt_report_free(&rep);
    free(keep);
    return rc;
}

static int cmd_replay(struct replay_opts *o)
{
    if (!o->at && (o->format || o->wide || o->unknown_as || o->nroutes)) {
        bt_err("replay: --format, --wide, --route and --unknown-as need --at MINUTE (they "
               "shape the printed report; in the replay, / filters the routes); see bedtop --help");
        return 3;
    }
    struct bt_replay rp;
    if (!open_recording(&o->common, &rp, "replay"))
        return 3;
    int rc;
    if (o->at)
        rc = replay_print(o, &rp);
    else
        rc = replay_view_run(&o->common, &rp);
    bt_replay_free(&rp);
    return rc;
}

/* j as cJSON_PrintUnformatted prints it, sanitised (bt_san_json_text) onto b; the
 * scratch text is kept between calls (export writes a row at a time) */
static struct bt_buf json_scratch;
static void json_put(struct bt_buf *b, const cJSON *j)
{
    bt_buf_reset(&json_scratch);
    bt_buf_json_compact(&json_scratch, j);
    bt_san_json_text(b, bt_buf_str(&json_scratch));
}

static void json_row(struct bt_buf *b, const struct bt_replay_cursor *cur, int r,
                     struct bt_eval *evals, int64_t m, int64_t shown, bool first,
                     struct bt_share_memo *shares)
{
    /* the whole configuration and every route's evaluation: quota.shared_with
     * names the other routes of the group; shares: the minute's group lists */
    struct bt_report rep = {.cfg = &cur->cfg, .store = &cur->store, .now = shown, .evals = evals,
                            .n = cur->cfg.nroutes, .mode = "replay", .share_memo = shares};
    const struct bt_eval *e = &evals[r];
    /* written as text straight onto b, sanitised as json_put's (no tree: a row was
     * some hundred cJSON nodes built, printed, dropped, then sanitised in a pass) */
    bt_buf_puts(b, first ? "" : ",\n");
    struct bt_jw w;
    static struct bt_jw_times times; /* the instants of the export's last rows */
    bt_jw_text(&w, b);
    w.times = &times;
    bt_report_route_write(&rep, r, &w);
    /* the row's minute and instant, the same for every route of a step: formatted
     * once through the same cache as the route's own instants */
    bt_jw_time(&w, "time", m);
    bt_jw_time(&w, "evaluated_at", bt_eval_now(e));
    bt_jw_obj(&w, "signals");
    for (int k = 0; k < BT_SIG_COUNT; k++) {
        double v = bt_eval_signal_row(&cur->store, e, (enum bt_signal)k, m);
        if (!isnan(v))
            bt_jw_num(&w, bt_signal_info[k].name, v);
    }
    bt_jw_end(&w);
    bt_jw_end(&w);
}

/* The markers and the event log of data minutes from..to into the arrays mk and ev,
 * each entry stamped with its data minute and the instant it was seen: export's JSON
 * tail and replay --at's JSON (the content of the CSV's markers and events columns). */
/* One entry of the log as export's JSON has it (a marker: time, at, text). */
static cJSON *log_entry_json(const struct bt_replay *rp, const struct bt_logent *x)
{
    cJSON *j = cJSON_CreateObject();
    add_iso(j, "time", x->minute);
    add_iso(j, "at", x->at);
    if (x->kind == BT_LOG_MARKER) {
        cJSON_AddStringToObject(j, "text", x->text + 8 /* "marker: " */);
        return j;
    }
    cJSON_AddStringToObject(j, "kind", bt_logkind_name(x->kind));
    if (x->route >= 0)
        cJSON_AddStringToObject(j, "route", rp->cfg.routes[x->route].name);
    else
        cJSON_AddNullToObject(j, "route");
    if (x->kind == BT_LOG_STATUS) {
        cJSON_AddStringToObject(j, "from", bt_status_name(x->from));
        cJSON_AddStringToObject(j, "to", bt_status_name(x->to));
    } else if (x->kind == BT_LOG_RAISED || x->kind == BT_LOG_CLEARED) {
        cJSON_AddStringToObject(j, "code", bt_wcode_name(x->code));
    } else {
        cJSON_AddStringToObject(j, "source", bt_source_name(x->source));
    }
    cJSON_AddStringToObject(j, "text", x->text);
    return j;
}

static bool log_in_window(const struct bt_logent *x, const bool *keep, int64_t from, int64_t to)
{
    return x->minute >= from && x->minute <= to && !(x->route >= 0 && keep && !keep[x->route]);
}

static void log_json(cJSON *mk, cJSON *ev, const struct bt_replay *rp, const struct bt_evlog *log,
                     const bool *keep, int64_t from, int64_t to)
{
    size_t lo, hi;
    bt_evlog_minute_range(log, from, to, &lo, &hi);
    for (size_t i = lo; i < hi; i++) {
        const struct bt_logent *x = &log->e[i];
        if (log_in_window(x, keep, from, to))
            cJSON_AddItemToArray(x->kind == BT_LOG_MARKER ? mk : ev, log_entry_json(rp, x));
    }
}

/* After the rows: the markers and the event log of the window (data minutes from..to),
 * {"markers":[...],"events":[...]} joined onto {"rows": [...], each entry printed
 * on its own (a day's log is 10^5 entries: never one tree of them all). */
static void json_tail(struct bt_buf *b, const struct bt_replay *rp, const struct bt_evlog *log,
                      const bool *keep, int64_t from, int64_t to, FILE *f)
{
    bt_buf_puts(b, "\n],\n");
    for (int pass = 0; pass < 2; pass++) { /* markers, then events: the shape */
        bt_buf_puts(b, pass ? "],\"events\":[" : "\"markers\":[");
        size_t lo, hi, n = 0;
        bt_evlog_minute_range(log, from, to, &lo, &hi);
        for (size_t i = lo; i < hi; i++) {
            const struct bt_logent *x = &log->e[i];
            if ((x->kind == BT_LOG_MARKER) == (pass == 1))
                continue;
            if (!log_in_window(x, keep, from, to))
                continue;
            cJSON *it = log_entry_json(rp, x); /* one at a time: the same object, the same text */
            bt_buf_puts(b, n++ ? "," : "");
            json_put(b, it);
            cJSON_Delete(it);
            if (b->len > (1 << 20)) {
                fwrite(b->buf, 1, b->len, f);
                bt_buf_reset(b);
            }
        }
    }
    bt_buf_puts(b, "]}\n");
}

/* export's CSV rows evaluated but not written yet: their minute's log is not complete */
struct export_pending {
    struct export_row {
        int64_t m;
        int r;
        size_t off, len; /* the row's head in the heads buffer */
        enum bt_quality hq; /* its headroom's quality and binding side, the last fields */
        enum bt_side binding;
    } *row;
    size_t n, cap;
};

static void pending_add(struct export_pending *p, int64_t m, int r, size_t off, size_t len,
                        enum bt_quality hq, enum bt_side binding)
{
    if (p->n == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 256;
        p->row = bt_xrealloc(p->row, p->cap * sizeof *p->row);
    }
    p->row[p->n++] = (struct export_row){.m = m, .r = r, .off = off, .len = len, .hq = hq,
                                      .binding = binding};
}

/* Writes the pending rows of minutes before `complete` (the log is final there), in
 * order: head, then the minute's markers and the route's events. */
static void pending_flush(struct export_pending *p, struct bt_buf *heads, struct bt_buf *b,
                          struct bt_buf *mk, const struct bt_evlog *log, int64_t complete)
{
    size_t i = 0;
    int64_t mk_minute = INT64_MIN;
    for (; i < p->n && p->row[i].m < complete; i++) {
        const struct export_row *x = &p->row[i];
        if (x->m != mk_minute) { /* the minute's markers, "; "-joined */
            bt_buf_reset(mk);
            size_t lo, hi;
            bt_evlog_minute_range(log, x->m, x->m, &lo, &hi);
            for (size_t k = lo; k < hi; k++)
                if (log->e[k].kind == BT_LOG_MARKER && log->e[k].minute == x->m)
                    bt_buf_printf(mk, "%s%s", mk->len ? "; " : "", log->e[k].text + 8 /* "marker: " */);
            mk_minute = x->m;
        }
        bt_buf_add(b, heads->buf + x->off, x->len);
        bt_csv_row_tail(b, x->r, x->m, bt_buf_str(mk), log, x->hq, x->binding);
    }
    if (i == p->n) {
        p->n = 0;
        bt_buf_reset(heads);
    } else if (i) { /* rare: the rest wait, moved to the front */
        size_t shift = p->row[i].off;
        memmove(heads->buf, heads->buf + shift, heads->len - shift);
        heads->len -= shift;
        heads->buf[heads->len] = '\0';
        memmove(p->row, p->row + i, (p->n - i) * sizeof *p->row);
        p->n -= i;
        for (size_t k = 0; k < p->n; k++)
            p->row[k].off -= shift;
    }
}

static int cmd_export(struct export_opts *o)
{
    bool csv;
    if (!o->format || !strcmp(o->format, "csv"))
        csv = true;
    else if (!strcmp(o->format, "json"))
        csv = false;
    else {
        bt_err("export --format: '%s' is not a format; use csv or json", o->format);
        return 3;
    }
    /* --source: the window read from Prometheus into a private recording first,
     * then exported as any recording is (one path, one set of numbers) */
    struct export_opts src;
    char dir[] = "/tmp/bedtop-export.XXXXXX", path[64] = "";
    if (!o->source && (o->config || o->since)) {
        bt_err("export: --%s applies to export --source only (a recording carries its routes "
               "and its window); drop it", o->config ? "config" : "since");
        return 3;
    }
    if (o->source) {
        if (o->file) {
            bt_err("export: --source reads Prometheus, not '%s'; drop one of them", o->file);
            return 3;
        }
        if (!o->since && !o->from) {
            bt_err("export --source: say which window, e.g. --since 3h or --from 2026-11-29T10:00Z");
            return 3;
        }
        if (!mkdtemp(dir)) {
            bt_err("export: %s: %s", dir, strerror(errno));
            return 3;
        }
        snprintf(path, sizeof path, "%s/window.rec", dir);
        src = *o;
        src.file = path;
        int rc = cmd_record_backfill(&(struct record_opts){.common = src.common, .since = src.since,
                                                           .from = src.from, .to = src.to});
        src.from = src.to = src.since = NULL; /* the recording is the window */
        o = &src;
        if (rc) {
            unlink(path);
            rmdir(dir);
            return rc;
        }
    }
    struct bt_replay rp;
    bool opened = open_recording(&o->common, &rp, "export");
    if (path[0]) { /* read into memory: the file is no longer needed */
        unlink(path);
        rmdir(dir);
    }
    if (!opened)
        return 3;
    /* Rows are data minutes (the `time` column): every minute that was the newest
     * complete one while recording, each evaluated as bedtop showed it then. */
    int64_t first, last;
    bt_replay_minutes(&rp, &first, &last);
    int64_t from = first, to = last;
    bool *keep = NULL;
    int rc = 3;
    if ((o->from && !when(&rp, "--from", o->from, &from)) || (o->to && !when(&rp, "--to", o->to, &to)))
        goto out;
    char a[32], z[32], span[96];
    bt_fmt_iso(from, a, sizeof a);
    bt_fmt_iso(to, z, sizeof z);
    span_text(&rp, span, sizeof span);
    if (from > last || to < first) {
        bt_err("export: no data minutes from %s to %s; this recording has %s (the time "
               "column)", a, z, span);
        goto out;
    }
    if (from > to) {
        bt_err("export: --from %s is after --to %s; swap them (this recording has %s)", a, z,
               span);
        goto out;
    }
    if (from < first)
        from = first;
    if (to > last)
        to = last;
    if (!app_select_routes(o->routes, o->nroutes, &rp.cfg, &keep))
        goto out;
    struct app_output w;
    if (!app_output_open(&w, o->output))
        goto out;
    /* One pass over the recording: each step of the event log (every poll and every
     * data minute's instant, from the start: a change is logged against the
     * evaluation before it, wherever the window starts) evaluates every route once,
     * and a data minute's rows are taken from the step at its instant. A CSV row's
     * markers and events wait until the log of its minute is complete. */
    struct bt_evlog log;
    bt_evlog_init(&log, rp.cfg.nroutes);
    struct bt_buf b = {0};
    if (csv)
        bt_csv_header(&b);
    else
        bt_buf_puts(&b, "{\"rows\": [\n");
    bool first_row = true;
    struct bt_buf heads = {0}, mk = {0};
    struct export_pending pend = {0};
    /* each route's fields (name, model, ...) sanitised once, not once a row */
    struct bt_buf fields = {0};
    size_t *field_at = bt_xcalloc((size_t)rp.cfg.nroutes + 1, sizeof *field_at);
    for (int r = 0; csv && r < rp.cfg.nroutes; r++) {
        field_at[r] = fields.len;
        bt_csv_route_fields(&fields, &rp.cfg, r);
        field_at[r + 1] = fields.len;
    }
    int64_t m = from, t;
    struct bt_eval *evals;
    struct bt_share_memo shares = {0}; /* each group's share lists once a minute */
    while ((m <= to || bt_evlog_complete_before(&log, &rp) <= to) &&
           bt_evlog_replay_step_evals(&log, &rp, &t, &evals)) {
        /* the step's routes and store, as its evaluations were made */
        const struct bt_replay_cursor *cur = bt_evlog_cursor(&log);
        for (; m <= to && bt_replay_minute_instant(&rp, m) <= t; m += 60) {
            bt_share_memo_reset(&shares); /* a group's last member may not be kept */
            for (int r = 0; r < rp.cfg.nroutes; r++) {
                if (keep && !keep[r])
                    continue;
                if (csv) {
                    size_t off = heads.len;
                    bt_csv_row_head_with(&heads, fields.buf + field_at[r],
                                         field_at[r + 1] - field_at[r], &cur->store, &evals[r], m);
                    bt_csv_shares(&heads, &cur->cfg, &cur->store, evals, r, &shares);
                    pending_add(&pend, m, r, off, heads.len - off,
                                bt_fig_quality(&evals[r], BT_FIG_HEADROOM_PCT),
                                bt_eval_binding(&evals[r]));
                } else {
                    json_row(&b, cur, r, evals, m, t, first_row, &shares);
                }
                first_row = false;
            }
        }
        pending_flush(&pend, &heads, &b, &mk, &log, bt_evlog_complete_before(&log, &rp));
        if (b.len > (1 << 20)) {
            fwrite(b.buf, 1, b.len, w.f);
            bt_buf_reset(&b);
        }
    }
    pending_flush(&pend, &heads, &b, &mk, &log, INT64_MAX);
    bt_share_memo_free(&shares);
    free(pend.row);
    free(field_at);
    bt_buf_free(&fields);
    bt_buf_free(&heads);
    bt_buf_free(&mk);
    if (!csv)
        json_tail(&b, &rp, &log, keep, from, to, w.f);
    bt_evlog_free(&log);
    fwrite(b.buf, 1, b.len, w.f);
    bt_buf_free(&b);
    bt_buf_free(&json_scratch);
    rc = app_output_close(&w) ? 0 : 3;
out:
    free(keep);
    bt_replay_free(&rp);
    return rc;
}
