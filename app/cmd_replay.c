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
#include "core/json.h"
#include "core/recording.h"
#include "core/reportcalc.h"
#include "core/format.h"
#include "render/report.h"
#include "core/sanitize.h"
#include "core/util.h"

static void replay_warn(void *arg, const char *msg)
{
    (void)arg;
    bt_err("%s", msg);
}

static bool open_recording(struct opts *o, struct bt_replay *rp, const char *cmd)
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
        bt_err("%s", err);
        return false;
    }
    if (!rp->npolls) {
        bt_err("%s: no polls recorded; record for at least one poll interval", o->file);
        bt_replay_free(rp);
        return false;
    }
    return true;
}

static void span_text(const struct bt_replay *rp, char *out, size_t n)
{
    char b[32], c[32];
    bt_fmt_iso(rp->start, b, sizeof b);
    bt_fmt_iso(rp->end, c, sizeof c);
    snprintf(out, n, "%s to %s", b, c);
}

static bool when(const struct bt_replay *rp, const char *what, const char *s, int64_t *out)
{
    if (!bt_replay_when(rp, s, out)) {
        bt_err("%s: '%s' is not a time; use 14:32, +5m (from the start), -30m (before the end) "
               "or 2026-11-29T14:32:00Z", what, s);
        return false;
    }
    return true;
}

static int replay_print(struct opts *o, struct bt_replay *rp)
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
    int64_t t;
    if (!when(rp, "--at", o->at, &t))
        return 3;
    if (t < rp->start || t > rp->end) {
        char a[32], span[80];
        bt_fmt_iso(t, a, sizeof a);
        span_text(rp, span, sizeof span);
        bt_err("--at %s is outside the recording (%s); pick a time inside it", a, span);
        return 3;
    }
    bt_replay_seek(rp, t);
    struct bt_report rep;
    bt_report_build(&rep, &rp->cfg, &rp->store, t);
    bt_report_select(&rep, NULL, app_unknown_as(o));
    rep.mode = "replay";
    rep.wide = o->wide;
    bool color = fmt == BT_FMT_TEXT && !o->no_color && isatty(STDOUT_FILENO) && !getenv("NO_COLOR");
    struct bt_buf out = {0};
    bt_report_render(&rep, fmt, color, &out);
    if (fmt == BT_FMT_TEXT && !rp->has_admission)
        bt_buf_puts(&out, "\nnote: this recording has no admission counters (backfilled or none "
                          "configured)\n");
    fwrite(out.buf, 1, out.len, stdout);
    int rc = bt_status_exit(rep.status);
    bt_buf_free(&out);
    bt_report_free(&rep);
    return rc;
}

int cmd_replay(struct opts *o)
{
    if (!o->at && (o->format || o->wide || o->unknown_as)) {
        bt_err("replay: --format, --wide and --unknown-as need --at TIME (they shape the "
               "printed report); see bedtop --help");
        return 3;
    }
    struct bt_replay rp;
    if (!open_recording(o, &rp, "replay"))
        return 3;
    int rc;
    if (o->at)
        rc = replay_print(o, &rp);
    else
        rc = replay_view_run(o, &rp);
    bt_replay_free(&rp);
    return rc;
}

/* CSV numbers are bedtop's own: quoted like every field, never neutralised. */
static void csv_num(struct bt_buf *b, double v, int decimals)
{
    char n[BT_FMT_LONG];
    bt_buf_printf(b, ",\"%s\"", bt_fmt_plain(v, decimals, n, sizeof n));
}

static void csv_str(struct bt_buf *b, const char *s)
{
    bt_buf_putc(b, ',');
    bt_san_csv_buf(b, s ? s : "");
}

/* One header name per column: the signals as recorded, then the evaluation
 * (EstimatedTPMQuotaUsage is the estimated_tpm signal, so it is not repeated). */
static void csv_header(struct bt_buf *b)
{
    bt_buf_puts(b, "\"time\",\"route\",\"model_id\",\"region\",\"endpoint\",\"inference\"");
    for (int k = 0; k < BT_SIG_COUNT; k++)
        bt_buf_printf(b, ",\"%s\"", bt_signal_info[k].name);
    static const char *const eval_cols[] = {
        "settled_tpm", "held_tpm", "reserved_tpm", "reserved_source", "used_tpm", "quota_tpm", "quota_source",
        "headroom_tpm", "headroom_pct", "fits_more", "status", "warnings"};
    for (size_t k = 0; k < BT_ARRAY_LEN(eval_cols); k++)
        bt_buf_printf(b, ",\"%s\"", eval_cols[k]);
    bt_buf_putc(b, '\n');
}

static double signal_at(const struct bt_replay *rp, int r, int k, const struct bt_eval *e, int64_t m)
{
    return bt_store_at(&rp->store, r, (enum bt_signal)k,
                       bt_signal_info[k].source == BT_SRC_ADMISSION ? e->adm_minute : m);
}

static void csv_row(struct bt_buf *b, const struct bt_replay *rp, int r, const struct bt_eval *e,
                    int64_t m)
{
    const struct bt_route *rt = &rp->cfg.routes[r];
    char iso[32];
    bt_fmt_iso(m, iso, sizeof iso);
    bt_buf_printf(b, "\"%s\"", iso);
    csv_str(b, rt->name);
    csv_str(b, rt->model);
    csv_str(b, rt->region);
    csv_str(b, bt_endpoint_name(rt->endpoint));
    csv_str(b, bt_inference_name(rt->inference));
    for (int k = 0; k < BT_SIG_COUNT; k++)
        csv_num(b, signal_at(rp, r, k, e, m), 3);
    /* rounded as check --format json rounds them: one figure, one reading */
    csv_num(b, e->settled, 0);
    csv_num(b, e->held, 0);
    csv_num(b, e->reserved_per_min, 0);
    csv_str(b, e->reserved_source);
    csv_num(b, e->used, 0);
    csv_num(b, e->quota, 0);
    csv_str(b, bt_quota_source_name(e->quota_source));
    csv_num(b, e->headroom_tpm, 0);
    csv_num(b, e->headroom_pct, 1);
    csv_num(b, e->fits_more, 0);
    csv_str(b, bt_status_name(e->status));
    struct bt_buf w = {0};
    for (int i = 0; i < e->nwarn; i++)
        bt_buf_printf(&w, "%s%s", i ? ";" : "", bt_wcode_name(e->warnings[i].code));
    csv_str(b, bt_buf_str(&w));
    bt_buf_free(&w);
    bt_buf_putc(b, '\n');
}

static void json_row(struct bt_buf *b, struct bt_replay *rp, int r, struct bt_eval *evals,
                     int64_t m, int64_t shown, bool first)
{
    /* the whole configuration and every route's evaluation: quota.shared_with
     * names the other routes of the group */
    struct bt_report rep = {.cfg = &rp->cfg, .store = &rp->store, .now = shown, .evals = evals,
                            .n = rp->cfg.nroutes, .mode = "replay"};
    const struct bt_eval *e = &evals[r];
    cJSON *j = bt_report_route_json(&rep, r);
    char iso[32];
    bt_fmt_iso(m, iso, sizeof iso);
    cJSON_AddStringToObject(j, "time", iso);
    cJSON *sig = cJSON_AddObjectToObject(j, "signals");
    for (int k = 0; k < BT_SIG_COUNT; k++) {
        double v = signal_at(rp, r, k, e, m);
        if (!isnan(v))
            cJSON_AddNumberToObject(sig, bt_signal_info[k].name, v);
    }
    char *s = bt_json_print(j, false);
    bt_buf_puts(b, first ? "" : ",\n");
    bt_san_json_text(b, s);
    cJSON_free(s);
    cJSON_Delete(j);
}

int cmd_export(struct opts *o)
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
    struct opts src;
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
        int rc = cmd_record_backfill(&src);
        src.from = src.to = src.since = NULL; /* the recording is the window */
        o = &src;
        if (rc) {
            unlink(path);
            rmdir(dir);
            return rc;
        }
    }
    struct bt_replay rp;
    bool opened = open_recording(o, &rp, "export");
    if (path[0]) { /* read into memory: the file is no longer needed */
        unlink(path);
        rmdir(dir);
    }
    if (!opened)
        return 3;
    /* Rows are data minutes (the `time` column): every minute that was the newest
     * complete one while recording, each evaluated as bedtop showed it then. */
    int64_t first = bt_data_minute(&rp.cfg, rp.start), last = bt_data_minute(&rp.cfg, rp.end);
    int64_t from = first, to = last;
    bool *keep = NULL;
    int rc = 3;
    if ((o->from && !when(&rp, "--from", o->from, &from)) || (o->to && !when(&rp, "--to", o->to, &to)))
        goto out;
    char a[32], z[32], f[32], l[32];
    bt_fmt_iso(from, a, sizeof a);
    bt_fmt_iso(to, z, sizeof z);
    if (from > to) {
        bt_err("export: --from %s is after --to %s; swap them", a, z);
        goto out;
    }
    from = bt_minute_floor(from);
    if (from < first)
        from = first;
    if (to > last)
        to = last;
    if (from > to) {
        bt_fmt_iso(first, f, sizeof f);
        bt_fmt_iso(last, l, sizeof l);
        bt_err("export: no data minutes from %s to %s; this recording has %s to %s "
               "(the time column)", a, z, f, l);
        goto out;
    }
    if (!app_select_routes(o, &rp.cfg, &keep))
        goto out;
    struct app_output w;
    if (!app_output_open(&w, o->output))
        goto out;
    struct bt_buf b = {0};
    if (csv)
        csv_header(&b);
    else
        bt_buf_puts(&b, "[\n");
    int64_t lag = (int64_t)rp.cfg.cw_lag;
    bool first_row = true;
    struct bt_eval *evals = bt_xcalloc((size_t)(rp.cfg.nroutes ? rp.cfg.nroutes : 1), sizeof *evals);
    for (int64_t m = from; m <= to; m += 60) {
        int64_t shown = m + 60 + lag;
        shown = shown < rp.start ? rp.start : shown > rp.end ? rp.end : shown;
        bt_replay_seek(&rp, shown);
        bt_eval_all(&rp.cfg, &rp.store, shown, evals); /* routes on one quota together */
        for (int r = 0; r < rp.cfg.nroutes; r++) {
            if (keep && !keep[r])
                continue;
            if (csv)
                csv_row(&b, &rp, r, &evals[r], m);
            else
                json_row(&b, &rp, r, evals, m, shown, first_row);
            first_row = false;
        }
        if (b.len > (1 << 20)) {
            fwrite(b.buf, 1, b.len, w.f);
            bt_buf_reset(&b);
        }
    }
    free(evals);
    if (!csv)
        bt_buf_puts(&b, "\n]\n");
    fwrite(b.buf, 1, b.len, w.f);
    bt_buf_free(&b);
    rc = app_output_close(&w) ? 0 : 3;
out:
    free(keep);
    bt_replay_free(&rp);
    return rc;
}
