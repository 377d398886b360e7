/* The AWS credential chain in the AWS CLI's order, so `bedtop --profile x` means what
 * `aws --profile x` means: the plan decided from the environment and the shared files, and
 * the job that runs it inside a bt_http without blocking. Each provider is its own file,
 * driven through its struct bt_aws_provider (creds_int.h): creds_plan.c (a profile's
 * providers, static keys), creds_env.c, creds_assume.c, creds_web.c, creds_sso.c,
 * creds_process.c, creds_container.c, creds_imds.c; none calls back into this file (a step
 * ends through the job's ops). profile.c reads the shared files, region.c picks the Region
 * and endpoints. */
#include "aws/awsauth.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws/creds_int.h"

static void describe_file(struct bt_buf *b, const struct profile *p, int s)
{
    bt_buf_puts(b, p->path[s]);
    if (!p->file_exists[s])
        bt_buf_puts(b, " (not found)");
    else if (!p->section_found[s])
        bt_buf_puts(b, " (no such profile)");
    else
        bt_buf_puts(b, " (no keys)");
}

/* The whole chain, in the AWS CLI's order, decided from the environment and the files
 * (nothing is sent yet). 0 = plan ready, -1 = err. */
static int plan_build(struct plan *pl, const struct bt_aws_profile_opts *o, char *err, size_t errlen)
{
    memset(pl, 0, sizeof *pl);
    bool explicit_name;
    const char *name = bt_aws_profile_name(o, &explicit_name);
    bool flag_given = o && o->profile && *o->profile;
    bt_strlcpy(pl->top, name, sizeof pl->top);
    pl->explicit_profile = flag_given;
    struct bt_buf tried = {0};
    int rc = -1;
    struct profile p;
    memset(&p, 0, sizeof p);
    /* 1. environment keys (not with --profile: an explicit profile negates them, as in botocore) */
    if (!flag_given && bt_aws_env_static_present()) {
        rc = bt_aws_plan_env(pl, err, errlen);
        goto out;
    }
    if (bt_aws_profile_load(&p, name, err, errlen) != 0)
        goto out;
    bt_aws_plan_sts_endpoint(pl, o, &p);
    bt_buf_puts(&tried, flag_given ? "environment (skipped: --profile given)" : "environment");
    bool found = p.section_found[SRC_CREDS] || p.section_found[SRC_CONFIG];
    if (explicit_name && !found) {
        bt_aws_seterr(err, errlen, "profile \"%s\" (from %s) not found in %s or %s", name,
               flag_given ? "--profile" : "AWS_PROFILE", p.path[SRC_CREDS], p.path[SRC_CONFIG]);
        goto out;
    }
    /* 2. assume role (role_arn with source_profile or credential_source) */
    if (bt_aws_has_assume_role(&p)) {
        char visited[MAX_HOPS + 1][128];
        bt_strlcpy(visited[0], name, sizeof visited[0]);
        rc = bt_aws_plan_assume(pl, &p, visited, 1, err, errlen);
        goto out;
    }
    /* 3-6. web identity (env unless --profile), SSO, static keys, credential_process */
    int prc = bt_aws_plan_profile(pl, &p, !flag_given, err, errlen);
    if (prc <= 0) {
        rc = prc;
        goto out;
    }
    bt_buf_printf(&tried, ", profile \"%s\" in ", name);
    describe_file(&tried, &p, SRC_CREDS);
    bt_buf_puts(&tried, " and ");
    describe_file(&tried, &p, SRC_CONFIG);
    /* 7. container credentials, 8. IMDSv2 */
    if (bt_aws_env("AWS_CONTAINER_CREDENTIALS_FULL_URI") || bt_aws_env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")) {
        pl->kind = S_CONTAINER;
        rc = 0;
        goto out;
    }
    bt_buf_puts(&tried, ", container credentials (not configured)");
    if (bt_aws_env_true("AWS_EC2_METADATA_DISABLED")) {
        bt_buf_puts(&tried, ", IMDSv2 (disabled)");
        bt_aws_seterr(err, errlen, "no AWS credentials: tried %s", bt_buf_str(&tried));
        goto out;
    }
    pl->kind = S_IMDS;
    bt_strlcpy(pl->tried, bt_buf_str(&tried), sizeof pl->tried);
    rc = 0;
out:
    bt_aws_profile_free(&p);
    bt_buf_free(&tried);
    if (rc == 0) {
        /* run order: the hop nearest the source first */
        for (int i = 0, j = pl->nhops - 1; i < j; i++, j--) {
            struct hop t = pl->hops[i];
            pl->hops[i] = pl->hops[j];
            pl->hops[j] = t;
        }
    } else {
        bt_aws_plan_free(pl);
    }
    return rc;
}

/* ---- the job: runs a plan inside a bt_http, never blocking --------------------------- */

/* The providers awsauth.c drives, by the plan's kind. */
static const struct bt_aws_provider *const providers[] = {
    [S_STATIC] = &bt_aws_provider_static,   [S_PROCESS] = &bt_aws_provider_process,
    [S_CONTAINER] = &bt_aws_provider_container, [S_IMDS] = &bt_aws_provider_imds,
    [S_SSO] = &bt_aws_provider_sso,         [S_WEB] = &bt_aws_provider_web,
};

static void job_http_cb(void *arg, const struct bt_http_resp *r);

static void job_free(struct bt_aws_job *j)
{
    const struct bt_aws_provider *p = providers[j->pl.kind];
    if (p->release)
        p->release(j);
    bt_http_unwatch(j->h, -1, j); /* the first step's timer, when cancelled before it ran */
    bt_http_cancel(j->h, job_http_cb, j);
    bt_aws_plan_free(&j->pl);
    bt_creds_clear(&j->cur);
    bt_creds_clear(&j->signer.creds);
    bt_aws_wipe_buf(&j->out);
    bt_aws_wipe_buf(&j->errb);
    free(j);
}

void bt_aws_job_cancel(struct bt_aws_job *j)
{
    if (j)
        job_free(j);
}

static void job_fail(struct bt_aws_job *j, const char *err)
{
    j->cb(j->arg, NULL, err);
    job_free(j);
}

static void job_next(struct bt_aws_job *j);

static void job_got(struct bt_aws_job *j, const struct bt_creds *c)
{
    bt_creds_copy(&j->cur, c);
    job_next(j);
}

static int job_submit(struct bt_aws_job *j, bt_aws_answer_fn answer, struct bt_http_req *req)
{
    j->answer = answer;
    return bt_http_submit(j->h, req, job_http_cb, j);
}

static const struct bt_aws_job_ops job_ops = {.got = job_got, .fail = job_fail, .submit = job_submit};

static void job_http_cb(void *arg, const struct bt_http_resp *r)
{
    struct bt_aws_job *j = arg;
    j->answer(j, r);
}

/* ---- running the plan ---- */

static void job_next(struct bt_aws_job *j)
{
    if (j->hop < j->pl.nhops) {
        j->hop++;
        bt_aws_provider_assume.start(j);
        return;
    }
    struct bt_creds done = {0};
    bt_creds_copy(&done, &j->cur);
    if (bt_aws_plan_needs_mfa(&j->pl))
        bt_aws_mfa_store(j->pl.top, &done);
    j->cb(j->arg, &done, NULL);
    bt_creds_clear(&done);
    job_free(j);
}

static void job_kick(void *arg, int fd, bool timed_out)
{
    struct bt_aws_job *j = arg;
    (void)fd;
    (void)timed_out;
    bt_http_unwatch(j->h, -1, j);
    providers[j->pl.kind]->start(j);
}

int bt_aws_creds_start(struct bt_http *h, const struct bt_aws_profile_opts *o, struct bt_creds *out,
                       bt_aws_job_cb cb, void *arg, struct bt_aws_job **jobp, char *err, size_t errlen)
{
    if (jobp)
        *jobp = NULL;
    if (!out)
        return -1;
    struct bt_aws_job *j = bt_xcalloc(1, sizeof *j);
    j->ops = &job_ops;
    j->fd[0] = j->fd[1] = -1;
    if (plan_build(&j->pl, o, err, errlen) != 0) {
        free(j);
        return -1;
    }
    const struct bt_creds *cached = bt_aws_plan_needs_mfa(&j->pl) ? bt_aws_mfa_cached(j->pl.top) : NULL;
    if ((j->pl.kind == S_STATIC && j->pl.nhops == 0) || cached) {
        bt_creds_copy(out, cached ? cached : &j->pl.creds);
        job_free(j);
        return 0;
    }
    if (!h || !cb) {
        bt_aws_seterr(err, errlen, "profile \"%s\": credentials need network requests", j->pl.top);
        job_free(j);
        return -1;
    }
    j->h = h;
    j->cb = cb;
    j->arg = arg;
    if (jobp)
        *jobp = j;
    /* the first step starts from the loop (a zero-delay timer), so the caller returns first
     * and a failure arrives through cb like any other */
    bt_http_watch(h, -1, bt_http_mono_ms(), job_kick, j);
    return 1;
}

/* ---- the blocking form, for start-up checks and tests --------------------------------- */

struct sync_wait {
    bool done;
    int rc;
    struct bt_creds *out;
    char *err;
    size_t errlen;
};

static void sync_cb(void *arg, const struct bt_creds *c, const char *err)
{
    struct sync_wait *w = arg;
    w->done = true;
    w->rc = c ? 0 : -1;
    if (c)
        bt_creds_copy(w->out, c);
    else
        bt_aws_seterr(w->err, w->errlen, "%s", err ? err : "failed");
}

int bt_aws_resolve_creds(const struct bt_aws_profile_opts *o, struct bt_creds *out, char *err, size_t errlen)
{
    if (!out)
        return -1;
    struct bt_creds got = {0};
    struct sync_wait w = {.out = &got, .err = err, .errlen = errlen};
    struct bt_http *h = bt_http_new(0);
    struct bt_aws_job *j = NULL;
    int rc = bt_aws_creds_start(h, o, &got, h ? sync_cb : NULL, &w, &j, err, errlen);
    if (rc == 1) {
        while (!w.done && bt_http_poll(h, 1000, -1, NULL) >= 0)
            ;
        if (!w.done) {
            bt_aws_job_cancel(j);
            bt_aws_seterr(err, errlen, "credentials: the event loop failed");
        }
        rc = w.done ? w.rc : -1;
    }
    if (rc == 0)
        bt_creds_copy(out, &got);
    bt_creds_clear(&got);
    bt_http_free(h);
    return rc;
}

bool bt_aws_profile_needs_mfa(const struct bt_aws_profile_opts *o)
{
    struct plan pl;
    char err[256];
    if (plan_build(&pl, o, err, sizeof err) != 0)
        return false;
    bool mfa = bt_aws_plan_needs_mfa(&pl) && !bt_aws_mfa_cached(pl.top);
    bt_aws_plan_free(&pl);
    return mfa;
}

