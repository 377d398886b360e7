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
#include "collectors/http.h"
#include "collectors/loop.h"
#include "collectors/quotas.h"
#include "core/recording.h"
#include "core/report.h"
#include "core/util.h"

static void replay_warn(void *arg, const char *msg)
{
    (void)arg;
    bt_err("%s", msg);
}

static bool open_recording(struct opts *o, struct bt_replay *rp)
{
    char err[600];
    if (!o->file) {
        bt_err("which recording? (bedtop replay FILE)");
        return false;
    }
    if (!bt_replay_open(rp, o->file, replay_warn, NULL, err, sizeof err)) {
        bt_err("%s", err);
        return false;
    }
    if (!rp->npolls) {
        bt_err("%s: no polls recorded", o->file);
        bt_replay_free(rp);
        return false;
    }
    return true;
}

static bool when(const struct bt_replay *rp, const char *what, const char *s, int64_t *out)
{
    int64_t rel = s[0] == '+' ? rp->start : rp->end;
    if (!bt_parse_when(s, rp->start, rp->end, rel, out)) {
        bt_err("%s: '%s' is not a time (14:32, -30m, +5m, 2026-11-29T14:32:00Z)", what, s);
        return false;
    }
    return true;
}

static int replay_print(struct opts *o, struct bt_replay *rp)
{
    enum bt_format fmt = BT_FMT_TEXT;
    if (o->format && !bt_format_parse(o->format, &fmt)) {
        bt_err("--format: '%s' is not text, json or prometheus", o->format);
        return 3;
    }
    int64_t t;
    if (!when(rp, "--at", o->at, &t))
        return 3;
    if (t < rp->start || t > rp->end) {
        char a[32], b[32], c[32];
        bt_fmt_iso(t, a, sizeof a);
        bt_fmt_iso(rp->start, b, sizeof b);
        bt_fmt_iso(rp->end, c, sizeof c);
        bt_err("--at %s is outside the recording (%s to %s)", a, b, c);
        return 3;
    }
    bt_replay_seek(rp, t);
    struct bt_report rep;
    bt_report_build(&rep, &rp->cfg, &rp->store, t);
    rep.mode = "replay";
    bool color = fmt == BT_FMT_TEXT && !o->no_color && isatty(STDOUT_FILENO) && !getenv("NO_COLOR");
    struct bt_buf out = {0};
    bt_report_render(&rep, fmt, color, &out);
    if (fmt == BT_FMT_TEXT && !rp->has_admission)
        bt_buf_puts(&out, "\nnote: this recording has no admission counters (backfilled or none configured)\n");
    fwrite(out.buf, 1, out.len, stdout);
    int rc = bt_status_exit(rep.status);
    bt_buf_free(&out);
    bt_report_free(&rep);
    return rc;
}

int cmd_replay(struct opts *o)
{
    struct bt_replay rp;
    if (!open_recording(o, &rp))
        return 3;
    int rc;
    if (o->at)
        rc = replay_print(o, &rp);
    else
        rc = replay_view_run(o, &rp);
    bt_replay_free(&rp);
    return rc;
}

static void csv_field(struct bt_buf *b, const char *s)
{
    if (!strpbrk(s, ",\"\n")) {
        bt_buf_puts(b, s);
        return;
    }
    bt_buf_putc(b, '"');
    for (; *s; s++) {
        if (*s == '"')
            bt_buf_putc(b, '"');
        bt_buf_putc(b, *s);
    }
    bt_buf_putc(b, '"');
}

static void csv_num(struct bt_buf *b, double v)
{
    bt_buf_putc(b, ',');
    if (!isnan(v))
        bt_buf_printf(b, "%.10g", v);
}

int cmd_export(struct opts *o)
{
    bool csv;
    if (!o->format || !strcmp(o->format, "csv"))
        csv = true;
    else if (!strcmp(o->format, "json"))
        csv = false;
    else {
        bt_err("export --format: '%s' is not csv or json", o->format);
        return 3;
    }
    /* --source: the window read from Prometheus into a private recording first,
     * then exported as any recording is (one path, one set of numbers) */
    struct opts src;
    char dir[] = "/tmp/bedtop-export.XXXXXX", path[64] = "";
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
    bool opened = open_recording(o, &rp);
    if (path[0]) { /* read into memory: the file is no longer needed */
        unlink(path);
        rmdir(dir);
    }
    if (!opened)
        return 3;
    int64_t from = rp.start, to = rp.end;
    int only = -1;
    if ((o->from && !when(&rp, "--from", o->from, &from)) || (o->to && !when(&rp, "--to", o->to, &to))) {
        bt_replay_free(&rp);
        return 3;
    }
    if (o->route) {
        only = bt_config_find_route(&rp.cfg, o->route);
        if (only < 0) {
            bt_err("--route: no route '%s' in %s", o->route, o->file);
            bt_replay_free(&rp);
            return 3;
        }
    }
    FILE *out = stdout;
    if (o->output) {
        int fd = open(o->output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd >= 0 && fchmod(fd, 0600) != 0) { /* an existing file keeps its mode otherwise */
            close(fd);
            fd = -1;
        }
        out = fd >= 0 ? fdopen(fd, "w") : NULL;
        if (!out) {
            bt_err("%s: %s", o->output, strerror(errno));
            bt_replay_free(&rp);
            return 3;
        }
    }
    struct bt_buf b = {0};
    if (csv) {
        bt_buf_puts(&b, "time,route,model_id,region,endpoint,inference");
        for (int k = 0; k < BT_SIG_COUNT; k++)
            bt_buf_printf(&b, ",%s", bt_signal_info[k].name);
        bt_buf_puts(&b, ",settled_tpm,estimated_tpm,reserved_tpm,reserved_source,used_tpm,quota_tpm,"
                        "quota_source,headroom_tpm,headroom_pct,fits_more,status,warnings\n");
    } else {
        bt_buf_puts(&b, "[\n");
    }
    /* Each minute's row: its signals (final values) and the headroom and warnings
     * bedtop showed when that minute was the newest complete one. */
    int64_t lag = (int64_t)rp.cfg.cw_lag;
    bool first = true;
    for (int64_t m = bt_minute_floor(from - 60 - lag); m + 60 + lag <= to; m += 60) {
        int64_t shown = m + 60 + lag;
        if (shown < from)
            continue;
        bt_replay_seek(&rp, shown);
        for (int r = 0; r < rp.cfg.nroutes; r++) {
            if (only >= 0 && r != only)
                continue;
            const struct bt_route *rt = &rp.cfg.routes[r];
            struct bt_eval e;
            bt_eval_route(&rp.cfg, &rp.store, r, shown, &e);
            char iso[32];
            bt_fmt_iso(m, iso, sizeof iso);
            if (csv) {
                bt_buf_printf(&b, "%s,", iso);
                csv_field(&b, rt->name);
                bt_buf_putc(&b, ',');
                csv_field(&b, rt->model);
                bt_buf_printf(&b, ",%s,%s,%s", rt->region, bt_endpoint_name(rt->endpoint),
                              bt_inference_name(rt->inference));
                for (int k = 0; k < BT_SIG_COUNT; k++)
                    csv_num(&b, bt_store_at(&rp.store, r, (enum bt_signal)k,
                                            bt_signal_info[k].source == BT_SRC_ADMISSION ? e.adm_minute : m));
                csv_num(&b, e.settled);
                csv_num(&b, e.estimated);
                csv_num(&b, e.reserved);
                bt_buf_printf(&b, ",%s", e.reserved_source ? e.reserved_source : "");
                csv_num(&b, e.used);
                csv_num(&b, e.quota);
                bt_buf_printf(&b, ",%s", bt_quota_source_name(e.quota_source));
                csv_num(&b, e.headroom_tpm);
                csv_num(&b, isnan(e.headroom_pct) ? NAN : round(e.headroom_pct * 10) / 10);
                csv_num(&b, e.fits_more);
                bt_buf_printf(&b, ",%s,", bt_status_name(e.status));
                for (int w = 0; w < e.nwarn; w++)
                    bt_buf_printf(&b, "%s%s", w ? ";" : "", bt_wcode_name(e.warnings[w].code));
                bt_buf_putc(&b, '\n');
            } else {
                struct bt_report rep = {.cfg = &rp.cfg, .store = &rp.store, .now = shown,
                                        .evals = &e, .n = 1, .mode = "replay"};
                /* route_json reads cfg->routes[i] and evals[i]: point at this route */
                struct bt_config one = rp.cfg;
                one.routes = &rp.cfg.routes[r];
                one.nroutes = 1;
                rep.cfg = &one;
                cJSON *j = bt_report_route_json(&rep, 0);
                cJSON_AddStringToObject(j, "time", iso);
                cJSON *sig = cJSON_AddObjectToObject(j, "signals");
                for (int k = 0; k < BT_SIG_COUNT; k++) {
                    double v = bt_store_at(&rp.store, r, (enum bt_signal)k,
                                           bt_signal_info[k].source == BT_SRC_ADMISSION ? e.adm_minute : m);
                    if (!isnan(v))
                        cJSON_AddNumberToObject(sig, bt_signal_info[k].name, v);
                }
                char *s = cJSON_PrintUnformatted(j);
                bt_buf_printf(&b, "%s%s", first ? "" : ",\n", s);
                cJSON_free(s);
                cJSON_Delete(j);
            }
            first = false;
        }
        if (b.len > (1 << 20)) {
            fwrite(b.buf, 1, b.len, out);
            bt_buf_reset(&b);
        }
    }
    if (!csv)
        bt_buf_puts(&b, "\n]\n");
    fwrite(b.buf, 1, b.len, out);
    bt_buf_free(&b);
    int rc = 0;
    if (fflush(out) != 0 || ferror(out)) {
        bt_err("%s: %s", o->output ? o->output : "stdout", strerror(errno));
        rc = 3;
    }
    if (out != stdout)
        fclose(out);
    bt_replay_free(&rp);
    return rc;
}
