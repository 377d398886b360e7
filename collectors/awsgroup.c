#include "collectors/awsgroup.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "io/file.h"

static double req_timeout;

void bt_awsgroup_set_timeout(double seconds)
{
    req_timeout = seconds > 0 ? seconds : 0;
}

double bt_awsgroup_timeout(void)
{
    return req_timeout;
}

/* Shared files readable by others leak keys: say so once per file and run. */
void bt_awsgroup_warn_file_perms(void)
{
    static char warned[2][512];
    char path[512], msg[1200];
    for (int i = 0; i < 2; i++) {
        if (i == 0)
            bt_aws_credentials_file(path, sizeof path);
        else
            bt_aws_config_file(path, sizeof path);
        if (!strcmp(warned[i], path) || !bt_aws_check_file_perms(path, msg, sizeof msg))
            continue;
        bt_strlcpy(warned[i], path, sizeof warned[i]);
        bt_err("warning: %s", msg);
    }
}

/* --verbose names each identity once it is known (account and role, never a key). */
static void show_identity(struct bt_awsgroup_provider *gp, struct bt_http *h, const struct bt_creds *c)
{
    if (!bt_http_verbose(h) || !strcmp(gp->shown, c->source))
        return;
    bt_strlcpy(gp->shown, c->source, sizeof gp->shown);
    fprintf(stderr, "bedtop: credentials for profile %s: %s\n", gp->profile[0] ? gp->profile : "(default chain)",
            c->source);
}

/* One resolution per identity at a time, shared by every provider that needs it (the
 * CloudWatch and Service Quotas collectors use the same profile): one STS call, one SSO token
 * refresh (a refresh token may be single-use), one MFA prompt. */
#define MAX_SHARED 32
#define MAX_WAITERS 16
static struct shared {
    char key[700];
    struct bt_http *h;
    struct bt_aws_job *job;
    struct bt_awsgroup_provider *waiters[MAX_WAITERS];
    int nw;
} shared[MAX_SHARED];

static void provider_key(const struct bt_awsgroup_provider *gp, char *out, size_t n)
{
    snprintf(out, n, "%s|%s|%s", gp->profile, gp->region, gp->endpoint_url);
}

static void shared_done(void *arg, const struct bt_creds *c, const char *err)
{
    struct shared *sh = arg;
    struct shared copy = *sh;
    memset(sh, 0, sizeof *sh);
    for (int i = 0; i < copy.nw; i++) {
        struct bt_awsgroup_provider *gp = copy.waiters[i];
        gp->job = NULL;
        if (c)
            show_identity(gp, gp->h, c);
        bt_creds_provider_done(&gp->p, c, err);
    }
}

static void shared_leave(struct bt_awsgroup_provider *gp)
{
    for (int i = 0; i < MAX_SHARED; i++) {
        struct shared *sh = &shared[i];
        for (int k = 0; k < sh->nw; k++) {
            if (sh->waiters[k] != gp)
                continue;
            sh->waiters[k] = sh->waiters[--sh->nw];
            if (sh->nw == 0) {
                bt_aws_job_cancel(sh->job);
                memset(sh, 0, sizeof *sh);
            }
            return;
        }
    }
}

/* Starts the chain inside the loop; STS, SSO and credential_process never block it. */
static int provider_refresh(struct bt_creds_provider *p, struct bt_http *h, char *err, size_t errlen)
{
    struct bt_awsgroup_provider *gp = p->arg;
    bt_awsgroup_warn_file_perms();
    if (gp->job)
        return 1;
    gp->h = h;
    char key[700];
    provider_key(gp, key, sizeof key);
    struct shared *free_slot = NULL;
    for (int i = 0; i < MAX_SHARED; i++) {
        struct shared *sh = &shared[i];
        if (sh->job && sh->h == h && !strcmp(sh->key, key) && sh->nw < MAX_WAITERS) {
            sh->waiters[sh->nw++] = gp;
            gp->job = sh->job;
            return 1;
        }
        if (!sh->job && !free_slot)
            free_slot = sh;
    }
    struct bt_creds c;
    memset(&c, 0, sizeof c);
    struct bt_aws_job *job = NULL;
    int rc;
    if (free_slot) {
        rc = bt_aws_creds_start(h, &gp->opts, &c, shared_done, free_slot, &job, err, errlen);
        if (rc == 1) {
            bt_strlcpy(free_slot->key, key, sizeof free_slot->key);
            free_slot->h = h;
            free_slot->job = job;
            free_slot->waiters[0] = gp;
            free_slot->nw = 1;
            gp->job = job;
        }
    } else {
        snprintf(err, errlen, "too many credential refreshes at once");
        rc = -1;
    }
    if (rc == 0) {
        bt_creds_copy(&p->creds, &c);
        show_identity(gp, h, &c);
    }
    bt_creds_clear(&c);
    return rc;
}

void bt_awsgroup_provider_init(struct bt_awsgroup_provider *p, const char *profile,
                               const char *region, const char *endpoint_url)
{
    memset(p, 0, sizeof *p);
    bt_strlcpy(p->profile, profile ? profile : "", sizeof p->profile);
    bt_strlcpy(p->region, region ? region : "", sizeof p->region);
    bt_strlcpy(p->endpoint_url, endpoint_url ? endpoint_url : "", sizeof p->endpoint_url);
    p->opts.profile = p->profile[0] ? p->profile : NULL;
    p->opts.region = p->region[0] ? p->region : NULL;
    p->opts.endpoint_url = p->endpoint_url[0] ? p->endpoint_url : NULL;
    p->p.refresh = provider_refresh;
    p->p.arg = p;
}

void bt_awsgroup_provider_free(struct bt_awsgroup_provider *p)
{
    shared_leave(p);
    p->job = NULL;
    bt_creds_clear(&p->p.creds);
    p->p.valid = false;
}

static const char *route_profile(const struct bt_ctx *ctx, const struct bt_route *r)
{
    if (r->profile[0])
        return r->profile;
    if (ctx->profile && *ctx->profile)
        return ctx->profile;
    return ctx->cfg->profile;
}

static const char *endpoint_override(const struct bt_ctx *ctx)
{
    if (ctx->endpoint_url && *ctx->endpoint_url)
        return ctx->endpoint_url;
    return ctx->cfg->endpoint_url;
}

void bt_awsgroup_route_region(const struct bt_ctx *ctx, const struct bt_route *r, char *out,
                              size_t n)
{
    if (r && r->region[0]) {
        bt_strlcpy(out, r->region, n);
    } else if (ctx->region && *ctx->region) {
        bt_strlcpy(out, ctx->region, n);
    } else if (ctx->cfg->region[0]) {
        bt_strlcpy(out, ctx->cfg->region, n);
    } else {
        struct bt_aws_profile_opts o = {.profile = r ? route_profile(ctx, r) : ctx->cfg->profile};
        if (o.profile && !*o.profile)
            o.profile = NULL;
        char err[256];
        if (bt_aws_resolve_region(&o, out, n, err, sizeof err) != 0)
            out[0] = '\0';
    }
}

void bt_awsgroups_build(struct bt_awsgroups *gs, const struct bt_ctx *ctx, const char *service,
                        bool runtime_only)
{
    const struct bt_config *cfg = ctx->cfg;
    memset(gs, 0, sizeof *gs);
    gs->cost = ctx->api_cost;
    int max = cfg->nroutes > 0 ? cfg->nroutes : 1;
    /* providers and groups sized to how many there are (a few), not one per route:
     * at 20,000 routes that was 9 kB a route per collector; a first pass counts them */
    char (*regions)[32] = bt_xcalloc((size_t)max, sizeof *regions);
    int *rep = bt_xcalloc((size_t)max, sizeof *rep), nrep = 0, nprof = 0;
    for (int i = 0; i < cfg->nroutes; i++) {
        const struct bt_route *r = &cfg->routes[i];
        if (runtime_only && r->endpoint != BT_EP_RUNTIME)
            continue;
        bt_awsgroup_route_region(ctx, r, regions[i], sizeof regions[i]);
        const char *profile = route_profile(ctx, r);
        bool same_prof = false, same_group = false;
        for (int k = 0; k < nrep && !same_group; k++) {
            bool p = strcmp(route_profile(ctx, &cfg->routes[rep[k]]), profile) == 0;
            same_prof |= p;
            same_group = p && strcmp(regions[rep[k]], regions[i]) == 0;
        }
        nprof += !same_prof;
        if (!same_group)
            rep[nrep++] = i;
    }
    gs->prov = bt_xcalloc((size_t)(nprof ? nprof : 1), sizeof *gs->prov);
    gs->g = bt_xcalloc((size_t)(nrep ? nrep : 1), sizeof *gs->g);
    free(rep);
    for (int i = 0; i < cfg->nroutes; i++) {
        const struct bt_route *r = &cfg->routes[i];
        if (runtime_only && r->endpoint != BT_EP_RUNTIME)
            continue;
        const char *profile = route_profile(ctx, r);
        const char *region = regions[i];
        int pi = 0;
        while (pi < gs->nprov && strcmp(gs->prov[pi].profile, profile) != 0)
            pi++;
        if (pi == gs->nprov)
            bt_awsgroup_provider_init(&gs->prov[gs->nprov++], profile, region,
                                      endpoint_override(ctx));
        int gi = 0;
        while (gi < gs->n && (gs->g[gi].provider != pi || strcmp(gs->g[gi].region, region) != 0))
            gi++;
        struct bt_awsgroup *g = &gs->g[gi];
        if (gi == gs->n) {
            gs->n++;
            g->provider = pi;
            bt_strlcpy(g->profile, profile, sizeof g->profile);
            bt_strlcpy(g->region, region, sizeof g->region);
            g->routes = bt_xcalloc((size_t)max, sizeof *g->routes);
            struct bt_aws_profile_opts o = gs->prov[pi].opts;
            o.region = region[0] ? region : NULL;
            if (!region[0]) {
                snprintf(g->error, sizeof g->error,
                         "no Region for route %s; set AWS_REGION, --region or region = in the config",
                         r->name);
            } else if (bt_aws_endpoint(&o, service, region, g->url, sizeof g->url) != 0) {
                g->url[0] = '\0';
                snprintf(g->error, sizeof g->error, "no %s endpoint for Region %s", service,
                         region);
            }
        }
        g->routes[g->nroutes++] = i;
    }
    free(regions);
}

/* Requests in flight whose outcome is still to be counted: a fixed pool (no
 * allocation, so a request cancelled with the HTTP handle leaks nothing); its
 * slots go back when their groups are freed. */
struct counted {
    struct bt_awsgroups *gs;  /* NULL: free slot */
    bt_http_cb cb;
    void *arg;
    char api[48];
};
static struct counted pending[512];

static enum bt_api_outcome outcome_of(const struct bt_http_resp *resp)
{
    if (resp->status == 0)
        return BT_API_TRANSPORT;
    if (resp->status == 429 || bt_aws_is_throttle_code(resp->error_code))
        return BT_API_THROTTLED;
    return resp->status >= 200 && resp->status < 300 ? BT_API_OK : BT_API_ERROR;
}

static void counted_done(void *arg, const struct bt_http_resp *resp)
{
    struct counted *c = arg;
    struct counted k = *c;
    c->gs = NULL; /* free before the callback: it may submit again */
    bt_api_cost_request(k.gs->cost, k.api, outcome_of(resp));
    k.cb(k.arg, resp);
}

int bt_awsgroup_mfa_preflight(const struct bt_ctx *ctx, bt_aws_mfa_prompt_fn prompt, char *err, size_t errlen)
{
    enum { MAX_DISTINCT = 64 };
    const char *seen[MAX_DISTINCT];
    int nseen = 0;
    int n = ctx->cfg->nroutes > 0 ? ctx->cfg->nroutes : 1;
    for (int i = 0; i < n; i++) {
        const struct bt_route *r = ctx->cfg->nroutes > 0 ? &ctx->cfg->routes[i] : NULL;
        const char *profile = r ? route_profile(ctx, r) : (ctx->profile && *ctx->profile ? ctx->profile
                                                                                        : ctx->cfg->profile);
        bool dup = false;
        for (int k = 0; k < nseen && !dup; k++)
            dup = strcmp(seen[k], profile) == 0;
        if (dup || nseen == MAX_DISTINCT)
            continue;
        seen[nseen++] = profile;
        char region[32];
        bt_awsgroup_route_region(ctx, r, region, sizeof region);
        struct bt_aws_profile_opts o = {.profile = *profile ? profile : NULL, .region = region[0] ? region : NULL};
        if (!bt_aws_profile_needs_mfa(&o))
            continue;
        if (!prompt) {
            snprintf(err, errlen, "profile \"%s\" assumes a role with mfa_serial and needs an MFA code, but there "
                     "is no terminal to ask on; run bedtop from a terminal, or use a profile without mfa_serial",
                     *profile ? profile : "default");
            return -1;
        }
        struct bt_creds c;
        memset(&c, 0, sizeof c);
        bt_aws_set_mfa_prompt(prompt, NULL);
        int rc = bt_aws_resolve_creds(&o, &c, err, errlen);
        bt_aws_set_mfa_prompt(NULL, NULL);
        bt_creds_clear(&c);
        if (rc != 0)
            return -1;
    }
    return 0;
}

void bt_awsgroups_free(struct bt_awsgroups *gs)
{
    for (size_t i = 0; i < BT_ARRAY_LEN(pending); i++)
        if (pending[i].gs == gs)
            pending[i].gs = NULL;
    for (int i = 0; i < gs->nprov; i++)
        bt_awsgroup_provider_free(&gs->prov[i]);
    for (int i = 0; i < gs->n; i++)
        free(gs->g[i].routes);
    free(gs->prov);
    free(gs->g);
    memset(gs, 0, sizeof *gs);
}

/* AWS error messages can quote the canonical request or string to sign
 * (SignatureDoesNotMatch): keep only the part before any of that. */
static void safe_message(const char *in, char *out, size_t n)
{
    static const char *const cut[] = {"\n", "\\n", "The Canonical String", "canonical request",
                                      "String-to-Sign", "string to sign", "Signature=",
                                      "X-Amz-Security-Token", "Credential="};
    bt_strlcpy(out, in, n);
    for (size_t i = 0; i < BT_ARRAY_LEN(cut); i++) {
        char *p = strstr(out, cut[i]);
        if (p)
            *p = '\0';
    }
    bt_trim(out);
}

void bt_awsgroup_describe(const struct bt_http_resp *resp, char *out, size_t n)
{
    const char *url = resp->url ? resp->url : "";
    int att = resp->attempts;
    if (resp->status == 0) {
        char t[sizeof resp->transport_error];
        if (resp->kind == BT_ERR_CREDENTIALS) /* the signer's own message, whole */
            bt_strlcpy(t, resp->transport_error, sizeof t);
        else
            safe_message(resp->transport_error[0] ? resp->transport_error : "no response", t,
                         sizeof t);
        if (att > 1)
            snprintf(out, n, "%s after %d attempts (%s)", t, att, url);
        else
            snprintf(out, n, "%s (%s)", t, url);
        return;
    }
    char msg[512];
    safe_message(resp->error_message, msg, sizeof msg);
    char code[128];
    if (resp->error_code[0])
        bt_strlcpy(code, resp->error_code, sizeof code);
    else
        snprintf(code, sizeof code, "HTTP %ld", resp->status);
    snprintf(out, n, "%s after %d attempt%s%s%s", code, att, att == 1 ? "" : "s",
             msg[0] ? ": " : "", msg);
}

void bt_awsgroup_submit(struct bt_awsgroups *gs, const struct bt_awsgroup *g, struct bt_http *h,
                        const char *service, const char *target_prefix, const char *content_type,
                        const char *label, const char *op, const struct bt_buf *body,
                        void (*body_fn)(void *body_arg, struct bt_buf *out), void *body_arg,
                        bt_http_cb cb, void *arg)
{
    char target[96], full_label[160];
    snprintf(target, sizeof target, "%s%s", target_prefix, op);
    snprintf(full_label, sizeof full_label, "%s %s", label, op);
    struct bt_http_req req = {
        .policy = &bt_aws_policy,
        .method = "POST", .url = g->url, .service = service, .region = g->region,
        .creds = &gs->prov[g->provider].p, .target = target, .content_type = content_type,
        .body = !body ? NULL : body->buf ? body->buf : "", .body_len = body ? body->len : 0,
        .body_fn = body ? NULL : body_fn, .body_arg = body_arg, .label = full_label,
        .timeout = bt_awsgroup_timeout(),
    };
    struct counted *c = NULL;
    for (size_t i = 0; gs->cost && !c && i < BT_ARRAY_LEN(pending); i++)
        if (!pending[i].gs)
            c = &pending[i];
    if (!c) { /* nothing to count into, or 512 requests in flight: not counted */
        bt_http_submit(h, &req, cb, arg);
        return;
    }
    *c = (struct counted){.gs = gs, .cb = cb, .arg = arg};
    bt_strlcpy(c->api, op, sizeof c->api);
    if (bt_http_submit(h, &req, counted_done, c) < 0)
        c->gs = NULL;
}
