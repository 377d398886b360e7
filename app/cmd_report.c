/* bedtop report quota-request | incident: the documents pasted after an incident
 * (figures: core/reportcalc.h; layout: render/reportdoc.h). Files are written here. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "app/app.h"
#include "core/recording.h"
#include "core/shares.h"
#include "core/reportcalc.h"
#include "core/util.h"
#include "render/chart.h"
#include "render/reportdoc.h"
#include "io/file.h"
#include "io/recfile.h"

/* report's own options (app/app.h APP_OPT_FIELD, APP_OPT_ROW) */
#define REPORT_OPTIONS(X, T)                                                                 \
    X(T, STR, format, "format")                                                              \
    X(T, STR, since, "since")   /* quota-request: the usage of the last D (CloudWatch) */    \
    X(T, STR, margin, "margin") /* quota-request: PCT above the peak */                      \
    X(T, FLAG, png, "png")      /* incident: a PNG beside each SVG chart */                  \
    X(T, STR, from, "from")     /* the recording's minutes from T ... */                     \
    X(T, STR, to, "to")         /* ... to T */                                               \
    X(T, LIST, routes, "route") /* routes[], nroutes; none: every route */                   \
    X(T, STR, output, "output") /* quota-request: write here (0600); incident: the directory */
struct report_opts {
    APP_OPTS_COMMON;
    const char *report; /* the operand KIND: quota-request or incident */
    REPORT_OPTIONS(APP_OPT_FIELD, struct report_opts)
};

APP_CMD_EXEC(cmd_report, struct report_opts)
static const struct bt_cmd_opt report_options[] = {
    BT_OPT_STR("config", struct report_opts, config),
    APP_OPTS_AWS(struct report_opts),
    REPORT_OPTIONS(APP_OPT_ROW, struct report_opts)
};
const struct bt_cmd_entry bt_cmd_report_entry = {
    .name = "report",
    .usage = "report quota-request FILE|--since D [-f text|markdown|json]\n"
             "       bedtop report incident FILE [--from T] [--to T] [-o DIR] [--png]",
    .summary = "writes the documents that follow a capacity incident: the quota increase\n"
               "request (quota-request) and the incident write-up with its charts (incident)",
    .opts = report_options, .nopts = BT_ARRAY_LEN(report_options),
    .size = sizeof(struct report_opts), .word = true, .word_off = offsetof(struct report_opts, report),
    .exec = cmd_report_exec,
    .aws = "with quota-request --since only", .aws_once = true,
};

static void report_warn(void *arg, const char *msg)
{
    (void)arg;
    bt_err("%s", msg);
}

static bool open_rec(const char *path, struct bt_replay *rp)
{
    char err[4608];
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        bt_err("report: %s is a directory; give a recording file (made by bedtop record)", path);
        return false;
    }
    if (!bt_replay_open(rp, path, report_warn, NULL, err, sizeof err)) {
        bt_err("%s", err);
        return false;
    }
    if (!rp->npolls) {
        bt_err("%s: no polls recorded; record for at least one poll interval", path);
        bt_replay_free(rp);
        return false;
    }
    return true;
}

/* The data minutes --from..--to of the recording (default: all of them). */
static bool window(const struct report_opts *o, const struct bt_replay *rp, int64_t *from, int64_t *to)
{
    int64_t first = bt_data_minute(&rp->cfg, rp->start), last = bt_data_minute(&rp->cfg, rp->end);
    *from = first;
    *to = last;
    /* data minutes, as export's --from/--to: +5m after the first, -30m before the last */
    const char *bad = NULL;
    if (o->from && !bt_replay_when_minute(rp, o->from, from))
        bad = o->from;
    else if (o->to && !bt_replay_when_minute(rp, o->to, to))
        bad = o->to;
    if (bad) {
        bt_err("report: '%s' is not a time; use 14:32, +5m (after the first data minute), -30m "
               "(before the last) or 2026-11-29T14:32:00Z", bad);
        return false;
    }
    *from = bt_minute_floor(*from);
    *to = bt_minute_floor(*to);
    if (*from < first)
        *from = first;
    if (*to > last)
        *to = last;
    if (*from > *to) {
        char f[32], l[32];
        bt_fmt_iso(first, f, sizeof f);
        bt_fmt_iso(last, l, sizeof l);
        bt_err("report: no data minutes in that window; this recording has %s to %s", f, l);
        return false;
    }
    return true;
}

/* --margin 20% (or 20): the ask is the peak plus this much. */
static bool margin_of(const struct report_opts *o, double *factor)
{
    *factor = 1.2;
    if (!o->margin)
        return true;
    char s[32];
    bt_strlcpy(s, o->margin, sizeof s);
    size_t n = strlen(s);
    if (n && s[n - 1] == '%')
        s[n - 1] = '\0';
    double pct;
    if (!bt_parse_double(s, &pct) || pct < 0 || pct > 1000) {
        bt_err("--margin: '%s' is not a percentage from 0 to 1000; use e.g. 20%%", o->margin);
        return false;
    }
    *factor = 1 + pct / 100;
    return true;
}

static int quota_request(struct report_opts *o)
{
    enum bt_doc_format fmt = BT_DOC_TEXT;
    if (o->format && !bt_doc_format_parse(o->format, &fmt)) {
        bt_err("report quota-request --format: '%s' is not a format; use text, markdown or json",
               o->format);
        return 3;
    }
    double margin;
    if (!margin_of(o, &margin))
        return 3;
    if (o->png) {
        bt_err("report quota-request: --png applies to report incident (its charts)");
        return 3;
    }
    if (o->since && o->file) {
        bt_err("report quota-request: --since reads CloudWatch history, not '%s'; give one of them",
               o->file);
        return 3;
    }
    if (!o->since && !o->file) {
        bt_err("report quota-request: from which usage?; give a recording FILE or --since 7d "
               "(CloudWatch history, at most 15 days)");
        return 3;
    }
    if (o->since && (o->from || o->to)) {
        bt_err("report quota-request: --from/--to select minutes of a recording; with --since "
               "the window is the last D");
        return 3;
    }
    char dir[] = "/tmp/bedtop-report.XXXXXX", tmp[64] = "", source[640];
    const char *path = o->file;
    if (o->since) { /* the backfill `record --since` makes, into a private recording */
        if (!mkdtemp(dir)) {
            bt_err("report: %s: %s", dir, strerror(errno));
            return 3;
        }
        snprintf(tmp, sizeof tmp, "%s/window.rec", dir);
        struct record_opts src = {.common = o->common, .since = o->since, .from = o->from, .to = o->to};
        src.file = tmp;
        int rc = cmd_record_backfill(&src);
        if (rc) {
            unlink(tmp);
            rmdir(dir);
            return rc;
        }
        path = tmp;
        snprintf(source, sizeof source, "CloudWatch history (the last %s)", o->since);
    } else {
        const char *base = strrchr(o->file, '/');
        snprintf(source, sizeof source, "the recording %s", base ? base + 1 : o->file);
    }
    struct bt_replay rp;
    bool opened = open_rec(path, &rp);
    if (tmp[0]) {
        unlink(tmp);
        rmdir(dir);
    }
    if (!opened)
        return 3;
    int rc = 3;
    bool *keep = NULL;
    int64_t from, to;
    if (!window(o, &rp, &from, &to) || !app_select_routes(o->routes, o->nroutes, &rp.cfg, &keep))
        goto out;
    /* every sample visible and the quotas learned while recording applied */
    bt_replay_seek(&rp, rp.end);
    struct bt_eval *evals = bt_xcalloc((size_t)(rp.cfg.nroutes ? rp.cfg.nroutes : 1), sizeof *evals);
    bt_eval_all(&rp.cfg, &rp.store, rp.end, evals);
    struct bt_qr q;
    bt_qr_build(&rp.cfg, &rp.store, evals, from, to, keep, margin, &q);
    free(evals);
    /* the cause of the throttles as the rules named it minute by minute, and the
     * covered minutes, as the incident report counts them */
    bt_qr_walk(&q, &rp);
    struct bt_buf b = {0};
    bt_qr_render(&q, &rp.cfg, fmt, source, (int64_t)time(NULL), &b);
    bt_qr_free(&q);
    struct app_output w;
    if (app_output_open(&w, o->output)) {
        fwrite(b.buf, 1, b.len, w.f);
        rc = app_output_close(&w) ? 0 : 3;
    }
    bt_buf_free(&b);
out:
    free(keep);
    bt_replay_free(&rp);
    return rc;
}

static bool make_dir(const char *dir)
{
    struct stat st;
    if (stat(dir, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return true;
        bt_err("report incident -o %s: not a directory; give a directory for report.md and the "
               "charts", dir);
        return false;
    }
    if (mkdir(dir, 0755) != 0) {
        bt_err("report incident -o %s: %s", dir, strerror(errno));
        return false;
    }
    return true;
}

/* The charts into the set, beside report.md: nothing is renamed into place unless all are. */
static bool add_charts(struct bt_outset *set, const struct bt_incident *inc, const struct bt_config *cfg,
                       bool png, char *err, size_t errlen)
{
    for (int k = 0; k < BT_CHART_COUNT; k++) {
        struct bt_chart c;
        bt_inc_chart_build(inc, cfg, (enum bt_inc_chart)k, &c);
        for (int pass = 0; pass < (png ? 2 : 1); pass++) {
            struct bt_buf img = {0};
            char cerr[256], name[128];
            bool ok = pass ? bt_chart_png(&c, &img, cerr, sizeof cerr)
                           : bt_chart_svg(&c, &img, cerr, sizeof cerr);
            snprintf(name, sizeof name, "%s.%s", bt_inc_chart_file((enum bt_inc_chart)k),
                     pass ? "png" : "svg");
            if (!ok)
                snprintf(err, errlen, "%s/%s: %s", set->dir, name, cerr);
            else
                ok = bt_outset_add(set, name, img.buf, img.len, err, errlen);
            bt_buf_free(&img);
            if (!ok) {
                bt_chart_free(&c);
                return false;
            }
        }
        bt_chart_free(&c);
    }
    return true;
}

/* Who held the quota when it ran out: the most affected route's group, by holder,
 * over the window (core/shares.h), its section appended to md. */
static void incident_holders(const struct bt_incident *inc, struct bt_replay *rp, bool png,
                             struct bt_buf *md, struct bt_share_minutes *sm)
{
    int routes[1];
    int r = bt_inc_charted(inc, routes, 1) ? routes[0] : -1;
    bt_share_minutes_build(rp, r, inc->from, inc->n, sm);
    bt_inc_holders_md(sm, &rp->cfg, png, md);
}

static bool add_holders_chart(struct bt_outset *set, const struct bt_share_minutes *sm,
                              const struct bt_config *cfg, bool png, char *err, size_t errlen)
{
    if (!sm->n || !sm->nh)
        return true;
    struct bt_chart c;
    bt_inc_holders_chart(sm, cfg, &c);
    bool ok = true;
    for (int pass = 0; ok && pass < (png ? 2 : 1); pass++) {
        struct bt_buf img = {0};
        char cerr[256], name[32];
        ok = pass ? bt_chart_png(&c, &img, cerr, sizeof cerr) : bt_chart_svg(&c, &img, cerr, sizeof cerr);
        snprintf(name, sizeof name, "holders.%s", pass ? "png" : "svg");
        if (!ok)
            snprintf(err, errlen, "%s/%s: %s", set->dir, name, cerr);
        else
            ok = bt_outset_add(set, name, img.buf, img.len, err, errlen);
        bt_buf_free(&img);
    }
    bt_chart_free(&c);
    return ok;
}

static int incident(struct report_opts *o)
{
    if (o->format) {
        bt_err("report incident: --format does not apply; it writes report.md and SVG charts "
               "(--png: PNG too) into -o DIR");
        return 3;
    }
    if (o->margin || o->since) {
        bt_err("report incident: --%s applies to quota-request only", o->margin ? "margin" : "since");
        return 3;
    }
    if (!o->file) {
        bt_err("report incident: which recording?; use bedtop report incident FILE [-o DIR]");
        return 3;
    }
    struct bt_replay rp;
    if (!open_rec(o->file, &rp))
        return 3;
    int rc = 3;
    bool *keep = NULL;
    int64_t from, to;
    char dir[4096];
    struct bt_incident inc = {0};
    if (!window(o, &rp, &from, &to) || !app_select_routes(o->routes, o->nroutes, &rp.cfg, &keep))
        goto out;
    if (o->output) {
        bt_strlcpy(dir, o->output, sizeof dir);
    } else {
        char iso[32];
        bt_fmt_iso(from, iso, sizeof iso);
        snprintf(dir, sizeof dir, "incident-%.4s%.2s%.2s-%.2s%.2s", iso, iso + 5, iso + 8,
                 iso + 11, iso + 14);
    }
    if (!make_dir(dir))
        goto out;
    bt_incident_build(&rp, from, to, keep, &inc);
    struct bt_buf md = {0};
    bt_incident_render_md(&inc, &rp, o->png, &md);
    struct bt_share_minutes holders;
    incident_holders(&inc, &rp, o->png, &md, &holders);
    /* report.md and the charts to temporary names in dir, then renamed together: a full
     * disk or a refused file leaves the previous set whole */
    struct bt_outset set;
    char err[4608];
    bt_outset_init(&set, dir);
    bool ok = bt_outset_add(&set, "report.md", md.buf, md.len, err, sizeof err) &&
              add_charts(&set, &inc, &rp.cfg, o->png, err, sizeof err) &&
              add_holders_chart(&set, &holders, &rp.cfg, o->png, err, sizeof err) &&
              bt_outset_commit(&set, err, sizeof err);
    bt_share_minutes_free(&holders);
    if (!ok)
        bt_err("report incident: %s; nothing written, the files already in %s are unchanged", err, dir);
    bt_outset_free(&set);
    bt_chart_shutdown();
    bt_buf_free(&md);
    if (ok) {
        printf("%s/report.md: %d data minutes, %d of %d routes affected, %d charts%s\n", dir, inc.n,
               inc.naffected, inc.nroutes, BT_CHART_COUNT, o->png ? " (SVG and PNG)" : " (SVG)");
        rc = 0;
    }
out:
    bt_incident_free(&inc);
    free(keep);
    bt_replay_free(&rp);
    return rc;
}

static int cmd_report(struct report_opts *o)
{
    if (!o->report) {
        bt_err("report: which one?; use bedtop report quota-request or bedtop report incident");
        return 3;
    }
    if (!strcmp(o->report, "quota-request"))
        return quota_request(o);
    if (!strcmp(o->report, "incident"))
        return incident(o);
    bt_err("report: no report '%s'; the reports are quota-request and incident", o->report);
    return 3;
}
