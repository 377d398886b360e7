#include "core/recording.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/recfmt.h"
#include "core/strmap.h"
#include "core/util.h"

/* The recording writer (man 5 bedtop-recording): the header from the config,
 * then one poll line per flush with the samples and events the store took. The
 * bytes go through a sink (io/recfile.c: the file); this file only builds them. */

struct bt_recorder {
    struct bt_rec_sink sink;
    char path[512];
    struct bt_buf line;        /* samples of the line being built */
    struct bt_buf events;
    int nsamples, nevents;
    /* the group being built: samples of one route, minute and arrival */
    int g_route;
    int64_t g_minute, g_arrival;
    bool g_open;
    /* counter readings: rows of one route, series, arrival and time */
    struct bt_buf readings, keys;
    int nreadings, nkeys;
    int c_route, c_series;
    int64_t c_arrival;
    double c_t;
    bool c_open;
    /* 2.1: coverage records ("v") */
    struct bt_buf cover;
    int ncover;
    /* the series named so far in this file ("k"), by index */
    struct rec_series {
        uint64_t hash;
        char *id;
    } *series;
    int nseries, capseries;
    int nseries_written;       /* those named in lines that reached the file */
    unsigned long lines, dropped;
    char error[512 + 128];     /* "recording PATH: why (lines are being dropped)" whole */
    int64_t latest;            /* newest time taken (a flush, a sample's arrival, an event) */
    long long good;            /* size after the last complete line */
    bool torn;                 /* a failed write may have left part of a line after it */
};

static cJSON *route_json(const struct bt_route *r)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", r->name);
    cJSON_AddStringToObject(o, "model", r->model);
    if (r->base_model[0])
        cJSON_AddStringToObject(o, "base_model", r->base_model);
    cJSON_AddStringToObject(o, "region", r->region);
    if (r->profile[0])
        cJSON_AddStringToObject(o, "profile", r->profile);
    if (r->project[0])
        cJSON_AddStringToObject(o, "project", r->project);
    if (r->base_model[0])
        cJSON_AddStringToObject(o, "base_model", r->base_model);
    if (r->account[0])
        cJSON_AddStringToObject(o, "account", r->account);
    if (r->context[0])
        cJSON_AddStringToObject(o, "context", r->context);
    cJSON_AddStringToObject(o, "endpoint", bt_endpoint_name(r->endpoint));
    cJSON_AddStringToObject(o, "inference", bt_inference_name(r->inference));
    cJSON_AddStringToObject(o, "priority", r->priority == BT_PRIO_OFFLINE ? "offline" : "online");
    if (!isnan(r->max_tokens))
        cJSON_AddNumberToObject(o, "max_tokens", r->max_tokens);
    if (!isnan(r->concurrency_limit))
        cJSON_AddNumberToObject(o, "concurrency_limit", r->concurrency_limit);
    /* the catalogue's prior: a measured burndown is derived, and a replay measures
     * it again from the recorded samples */
    cJSON_AddNumberToObject(o, "burndown", r->burndown_prior);
    cJSON_AddStringToObject(o, "burndown_source", r->burndown_prior_source);
    if (r->burndown_row[0])
        cJSON_AddStringToObject(o, "burndown_row", r->burndown_row);
    if (r->legacy_seen)
        cJSON_AddBoolToObject(o, "legacy", true);
    bt_rec_route_spend(o, r);
    if (r->quota_code[0])
        cJSON_AddStringToObject(o, "quota_code", r->quota_code);
    /* whether counters were configured, never the URL (it may carry credentials) */
    cJSON_AddBoolToObject(o, "admission", r->admission[0] != '\0');
    cJSON *q = cJSON_AddObjectToObject(o, "quotas");
    for (int k = 0; k < BT_Q_COUNT; k++) {
        const struct bt_quota *qq = &r->quota[k];
        if (isnan(qq->value))
            continue;
        cJSON *x = cJSON_AddObjectToObject(q, bt_quota_kind_name(k));
        cJSON_AddNumberToObject(x, "value", qq->value);
        cJSON_AddStringToObject(x, "source", bt_quota_source_name(qq->source));
        if (bt_quota_match_name(r->quota_match[k]))
            cJSON_AddStringToObject(x, "matched_by", bt_quota_match_name(r->quota_match[k]));
        if (qq->code[0])
            cJSON_AddStringToObject(x, "code", qq->code);
        if (qq->name[0])
            cJSON_AddStringToObject(x, "name", qq->name);
        if (r->quota_adjustable[k] != BT_ADJ_UNKNOWN)
            cJSON_AddBoolToObject(x, "adjustable", r->quota_adjustable[k] == BT_ADJ_YES);
    }
    return o;
}

static void threshold_str(const struct bt_threshold *t, char *out, size_t n)
{
    snprintf(out, n, "%g%s", t->value, t->pct ? "%" : "");
}

static char *header_json(const struct bt_config *cfg, const char *mode, int64_t now)
{
    cJSON *h = cJSON_CreateObject();
    char iso[32], buf[32];
    cJSON_AddStringToObject(h, "format", BT_REC_FORMAT);
    snprintf(buf, sizeof buf, "%d.%d", BT_REC_MAJOR, BT_REC_MINOR);
    cJSON_AddStringToObject(h, "version", buf);
    bt_fmt_iso(now, iso, sizeof iso);
    cJSON_AddStringToObject(h, "created", iso);
    cJSON_AddStringToObject(h, "created_by", "bedtop " BEDTOP_VERSION);
    cJSON_AddStringToObject(h, "mode", mode);
    cJSON *sig = cJSON_AddArrayToObject(h, "signals");
    for (int i = 0; i < BT_SIG_COUNT; i++)
        cJSON_AddItemToArray(sig, cJSON_CreateString(bt_signal_info[i].name));
    cJSON *c = cJSON_AddObjectToObject(h, "config");
    cJSON_AddNumberToObject(c, "interval", cfg->interval);
    cJSON_AddNumberToObject(c, "cloudwatch_lag", cfg->cw_lag);
    threshold_str(&cfg->warn, buf, sizeof buf);
    cJSON_AddStringToObject(c, "warn_headroom", buf);
    threshold_str(&cfg->crit, buf, sizeof buf);
    cJSON_AddStringToObject(c, "crit_headroom", buf);
    cJSON_AddNumberToObject(c, "daily_warn", cfg->daily_warn_pct);
    cJSON_AddNumberToObject(c, "daily_crit", cfg->daily_crit_pct);
    cJSON_AddNumberToObject(c, "oversize_factor", cfg->oversize_factor);
    cJSON_AddNumberToObject(c, "oversize_margin", cfg->oversize_margin);
    cJSON_AddNumberToObject(c, "retry_share", cfg->retry_share);
    bt_rec_header_shares(c, cfg);
    cJSON_AddNumberToObject(c, "history_minutes", cfg->history_minutes);
    bt_rec_header_spend(c, cfg);
    cJSON_AddItemToObject(h, "prices", bt_rec_prices_json(cfg));
    cJSON *routes = cJSON_AddArrayToObject(h, "routes");
    for (int i = 0; i < cfg->nroutes; i++)
        cJSON_AddItemToArray(routes, route_json(&cfg->routes[i]));
    char *s = bt_json_print(h, false);
    cJSON_Delete(h);
    return s;
}

char *bt_recorder_header(const struct bt_config *cfg, const char *mode, int64_t now)
{
    return header_json(cfg, mode, now);
}

void bt_recorder_header_free(char *header)
{
    cJSON_free(header);
}

struct bt_recorder *bt_recorder_start(const struct bt_rec_sink *sink, const char *name,
                                      const char *header, int64_t now, char *err, size_t errlen)
{
    int e = sink->write(sink->arg, header, strlen(header));
    if (!e)
        e = sink->write(sink->arg, "\n", 1);
    if (e) {
        snprintf(err, errlen, "%s: %s", name, strerror(e));
        sink->close(sink->arg, false);
        return NULL;
    }
    struct bt_recorder *r = bt_xcalloc(1, sizeof *r);
    r->sink = *sink;
    r->latest = now;
    bt_strlcpy(r->path, name, sizeof r->path);
    r->good = (long long)strlen(header) + 1;
    return r;
}

static void close_group(struct bt_recorder *r)
{
    if (r->g_open)
        bt_buf_puts(&r->line, "]]");
    r->g_open = false;
}

/* full double precision, in the fewest digits that read back exactly */
static void put_num(struct bt_buf *b, double v)
{
    char num[32];
    snprintf(num, sizeof num, "%.15g", v);
    if (strtod(num, NULL) != v)
        snprintf(num, sizeof num, "%.17g", v);
    bt_buf_puts(b, num);
}

/* The index of a series in this file; a new one is named in the line's "k". */
static int series_index(struct bt_recorder *r, const char *id)
{
    uint64_t h = bt_str_hash(id);
    for (int i = 0; i < r->nseries; i++)
        if (r->series[i].hash == h && !strcmp(r->series[i].id, id))
            return i;
    if (r->nseries == r->capseries) {
        r->capseries = r->capseries ? r->capseries * 2 : 16;
        r->series = bt_xrealloc(r->series, (size_t)r->capseries * sizeof *r->series);
    }
    r->series[r->nseries] = (struct rec_series){h, bt_xstrdup(id)};
    cJSON *s = cJSON_CreateString(id);
    bt_buf_printf(&r->keys, "%s[%d,", r->nkeys++ ? "," : "", r->nseries);
    bt_buf_json(&r->keys, s, false);
    bt_buf_putc(&r->keys, ']');
    cJSON_Delete(s);
    return r->nseries++;
}

static void close_row(struct bt_recorder *r)
{
    if (r->c_open)
        bt_buf_puts(&r->readings, "]]");
    r->c_open = false;
}

static void on_reading(void *arg, const struct bt_reading *rd, int64_t arrival)
{
    struct bt_recorder *r = arg;
    if (arrival > r->latest)
        r->latest = arrival;
    int idx = series_index(r, rd->series);
    if (!r->c_open || r->c_route != rd->route || r->c_series != idx ||
        r->c_arrival != arrival || r->c_t != rd->t) {
        close_row(r);
        bt_buf_printf(&r->readings, "%s[%d,%d,%lld,", r->nreadings ? "," : "", rd->route, idx,
                      (long long)arrival);
        put_num(&r->readings, rd->t);
        bt_buf_puts(&r->readings, ",[");
        r->c_open = true;
        r->c_route = rd->route;
        r->c_series = idx;
        r->c_arrival = arrival;
        r->c_t = rd->t;
    } else {
        bt_buf_putc(&r->readings, ',');
    }
    bt_buf_printf(&r->readings, "%d,", (int)rd->signal);
    put_num(&r->readings, rd->value);
    r->nreadings++;
}

static void on_sample(void *arg, const struct bt_sample *smp, int64_t arrival)
{
    struct bt_recorder *r = arg;
    int64_t minute = bt_minute_floor(smp->t);
    if (arrival > r->latest)
        r->latest = arrival;
    if (!r->g_open || r->g_route != smp->route || r->g_minute != minute ||
        r->g_arrival != arrival) {
        close_group(r);
        bt_buf_printf(&r->line, "%s[%d,%lld,%lld,[", r->nsamples ? "," : "", smp->route,
                      (long long)minute, (long long)arrival);
        r->g_open = true;
        r->g_route = smp->route;
        r->g_minute = minute;
        r->g_arrival = arrival;
    } else {
        bt_buf_putc(&r->line, ',');
    }
    bt_buf_printf(&r->line, "%d,", (int)smp->signal);
    put_num(&r->line, smp->value);
    r->nsamples++;
}

/* "v": [[route, from, to, settled_to, asked, arrival, [signal, ...]], ...] */
static void on_coverage(void *arg, const struct bt_coverage *c, int64_t arrival)
{
    struct bt_recorder *r = arg;
    if (arrival > r->latest)
        r->latest = arrival;
    bt_buf_printf(&r->cover, "%s[%d,%lld,%lld,%lld,%lld,%lld,[", r->ncover ? "," : "", c->route,
                  (long long)c->from, (long long)c->to, (long long)c->settled_to,
                  (long long)c->asked, (long long)arrival);
    bool first = true;
    for (int k = 0; k < BT_SIG_COUNT; k++)
        if (c->signals & BT_SIG_BIT(k)) {
            bt_buf_printf(&r->cover, "%s%d", first ? "" : ",", k);
            first = false;
        }
    bt_buf_puts(&r->cover, "]]");
    r->ncover++;
}

const char *const bt_rec_ev_names[BT_REC_NEVTYPES] = {"error", "ok",   "quota",
                                                      "marker", "info", "setting"};

static void on_event(void *arg, const struct bt_event *ev)
{
    struct bt_recorder *r = arg;
    if (ev->t > r->latest)
        r->latest = ev->t;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "t", (double)ev->t);
    cJSON_AddStringToObject(o, "type", bt_rec_ev_names[ev->type]);
    cJSON_AddNumberToObject(o, "route", ev->route);
    cJSON_AddStringToObject(o, "source", bt_source_name(ev->source));
    if (ev->type == BT_EV_QUOTA) {
        cJSON_AddStringToObject(o, "kind", bt_quota_kind_name(ev->quota_kind));
        cJSON_AddNumberToObject(o, "value", ev->value);
        cJSON_AddStringToObject(o, "quota_source", bt_quota_source_name(ev->quota_source));
        if (bt_quota_match_name(ev->matched_by))
            cJSON_AddStringToObject(o, "matched_by", bt_quota_match_name(ev->matched_by));
        if (ev->adjustable != BT_ADJ_UNKNOWN)
            cJSON_AddBoolToObject(o, "adjustable", ev->adjustable == BT_ADJ_YES);
    }
    if (ev->type == BT_EV_SETTING) {
        cJSON_AddStringToObject(o, "setting", bt_setting_name(ev->setting));
        if (bt_setting_is_number(ev->setting))
            cJSON_AddNumberToObject(o, "value", ev->value);
        else
            cJSON_AddStringToObject(o, "value", ev->str);
        if (ev->setting == BT_SET_BURNDOWN)
            cJSON_AddStringToObject(o, "burndown_source", ev->str);
    }
    if (ev->code[0])
        cJSON_AddStringToObject(o, "code", ev->code);
    if (ev->text[0])
        cJSON_AddStringToObject(o, "text", ev->text);
    if (r->nevents++)
        bt_buf_putc(&r->events, ',');
    bt_buf_json(&r->events, o, false);
    cJSON_Delete(o);
}

void bt_recorder_add_sample(struct bt_recorder *r, const struct bt_sample *smp, int64_t arrival)
{
    on_sample(r, smp, arrival);
}

void bt_recorder_add_coverage(struct bt_recorder *r, const struct bt_coverage *c, int64_t arrival)
{
    on_coverage(r, c, arrival);
}

void bt_recorder_add_event(struct bt_recorder *r, const struct bt_event *ev)
{
    on_event(r, ev);
}

void bt_recorder_attach(struct bt_recorder *r, struct bt_store *s)
{
    s->tap = (struct bt_store_tap){.sample = on_sample, .event = on_event,
                                   .reading = on_reading, .coverage = on_coverage, .arg = r};
}

/* After a failed write the file may end in part of a line: cut it back to the
 * last complete line (shrinking needs no space on a full disk). */
static void mend(struct bt_recorder *r)
{
    if (r->torn && r->sink.truncate(r->sink.arg, r->good))
        r->torn = false;
}

int bt_recorder_flush(struct bt_recorder *r, int64_t t)
{
    if (t > r->latest)
        r->latest = t;
    if (!r->nsamples && !r->nevents && !r->nreadings && !r->ncover)
        return 0;
    close_group(r);
    close_row(r);
    struct bt_buf out = {0};
    mend(r);
    /* could not cut it back: a newline ends the partial line (the reader skips
     * that one line), so this line starts on a line of its own */
    bt_buf_printf(&out, "%s{\"t\":%lld,\"s\":[%s]", r->torn ? "\n" : "", (long long)t,
                  bt_buf_str(&r->line));
    if (r->nkeys)
        bt_buf_printf(&out, ",\"k\":[%s]", bt_buf_str(&r->keys));
    if (r->nreadings)
        bt_buf_printf(&out, ",\"c\":[%s]", bt_buf_str(&r->readings));
    if (r->ncover)
        bt_buf_printf(&out, ",\"v\":[%s]", bt_buf_str(&r->cover));
    bt_buf_printf(&out, ",\"e\":[%s]}\n", bt_buf_str(&r->events));
    bt_buf_reset(&r->line);
    bt_buf_reset(&r->events);
    bt_buf_reset(&r->readings);
    bt_buf_reset(&r->keys);
    bt_buf_reset(&r->cover);
    r->nsamples = r->nevents = r->nreadings = r->nkeys = r->ncover = 0;
    int e = r->sink.write(r->sink.arg, out.buf, out.len);
    size_t len = out.len;
    bt_buf_free(&out);
    if (e) {
        /* Disk full or similar: say so once, drop this line, keep watching.
         * Recording resumes on a line boundary when writes succeed again. */
        r->torn = true;
        mend(r);
        if (!r->error[0])
            snprintf(r->error, sizeof r->error, "recording %s: %s (lines are being dropped)",
                     r->path, strerror(e));
        r->dropped++;
        /* the series this line named are unknown to a reader: name them again */
        for (int i = r->nseries_written; i < r->nseries; i++)
            free(r->series[i].id);
        r->nseries = r->nseries_written;
        return -1;
    }
    r->nseries_written = r->nseries;
    /* the size as the file has it: after a newline written over a partial line
     * (mend failed), the partial bytes count too */
    long long size = r->sink.size(r->sink.arg);
    r->torn = false;
    r->good = size >= 0 ? size : r->good + (long long)len;
    r->error[0] = '\0';
    r->lines++;
    return 0;
}

void bt_recorder_marker(struct bt_recorder *r, struct bt_store *s, int64_t t, const char *note)
{
    struct bt_event ev = {.t = t, .type = BT_EV_MARKER, .route = -1};
    bt_strlcpy(ev.text, note, sizeof ev.text);
    if (s)
        bt_store_event(s, &ev);
    else if (r)
        on_event(r, &ev);
    if (r)
        bt_recorder_flush(r, t);
}

const char *bt_recorder_error(const struct bt_recorder *r)
{
    return r && r->error[0] ? r->error : NULL;
}

unsigned long bt_recorder_lines(const struct bt_recorder *r)
{
    return r->lines;
}

unsigned long bt_recorder_dropped(const struct bt_recorder *r)
{
    return r->dropped;
}

const char *bt_recorder_path(const struct bt_recorder *r)
{
    return r->path;
}

void bt_recorder_close(struct bt_recorder *r)
{
    if (!r)
        return;
    /* what is pending becomes a poll at the newest time it holds: a poll at 0
     * made a replay of a dashboard or serve recording start in 1970 */
    bt_recorder_flush(r, r->latest);
    r->sink.close(r->sink.arg, true);
    bt_buf_free(&r->line);
    bt_buf_free(&r->events);
    bt_buf_free(&r->readings);
    bt_buf_free(&r->keys);
    bt_buf_free(&r->cover);
    for (int i = 0; i < r->nseries; i++)
        free(r->series[i].id);
    free(r->series);
    free(r);
}
