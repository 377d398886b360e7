/* The plan of one profile without an assume-role pair, in botocore's order of its profile
 * providers (web identity, IAM Identity Center, static keys, credential_process), and the
 * static-keys provider, whose credentials are in the plan already. awsauth.c and
 * creds_assume.c (a role's source profile) plan with it; it calls only creds_web.c and
 * creds_sso.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws/creds_int.h"

void bt_aws_plan_free(struct plan *pl)
{
    bt_creds_clear(&pl->creds);
    free(pl->cmd);
    memset(pl, 0, sizeof *pl);
}

bool bt_aws_has_static(const struct profile *p)
{
    for (int s = 0; s < 2; s++)
        if (p->akid[s] || p->secret[s])
            return true;
    return false;
}

bool bt_aws_has_assume_role(const struct profile *p)
{
    return bt_aws_pget(p, K_ROLE_ARN) && (bt_aws_pget(p, K_SOURCE_PROFILE) || bt_aws_pget(p, K_CRED_SOURCE));
}

int bt_aws_plan_static(struct plan *pl, const struct profile *p, char *err, size_t errlen)
{
    for (int s = 0; s < 2; s++) {
        if (!p->akid[s] && !p->secret[s])
            continue;
        char what[PATH_LEN + 160];
        snprintf(what, sizeof what, "profile \"%s\" in %s", p->name, p->path[s]);
        if (!p->akid[s] || !p->secret[s]) {
            bt_aws_seterr(err, errlen, "%s has %s but no %s", what,
                   p->akid[s] ? "aws_access_key_id" : "aws_secret_access_key",
                   p->akid[s] ? "aws_secret_access_key" : "aws_access_key_id");
            return -1;
        }
        if (bt_aws_creds_set(&pl->creds, p->akid[s], p->secret[s], p->token[s], what, err, errlen) != 0)
            return -1;
        bt_aws_creds_source(&pl->creds, "profile %s (%s)", p->name, p->path[s]);
        pl->kind = S_STATIC;
        bt_strlcpy(pl->src_profile, p->name, sizeof pl->src_profile);
        return 0;
    }
    return 1;
}

/* botocore's profile providers for a profile without an assume-role pair: web identity, SSO,
 * static keys, credential_process. 1 = none of them configured. */
int bt_aws_plan_profile(struct plan *pl, const struct profile *p, bool env_web, char *err, size_t errlen)
{
    const char *efile = env_web ? bt_aws_env("AWS_WEB_IDENTITY_TOKEN_FILE") : NULL;
    const char *erole = env_web ? bt_aws_env("AWS_ROLE_ARN") : NULL;
    const char *file = efile ? efile : bt_aws_pget(p, K_WEB_TOKEN_FILE);
    const char *role = erole ? erole : bt_aws_pget(p, K_ROLE_ARN);
    if (file && role) {
        const char *sess = env_web && bt_aws_env("AWS_ROLE_SESSION_NAME") ? getenv("AWS_ROLE_SESSION_NAME")
                         : bt_aws_pget(p, K_SESSION_NAME);
        char who[200];
        snprintf(who, sizeof who, efile ? "AWS_WEB_IDENTITY_TOKEN_FILE" : "profile \"%s\"", p->name);
        bt_strlcpy(pl->src_profile, efile ? "" : p->name, sizeof pl->src_profile);
        return bt_aws_plan_web(pl, file, role, sess, who, err, errlen);
    }
    if (bt_aws_pget(p, K_SSO_SESSION) || bt_aws_pget(p, K_SSO_START_URL) || bt_aws_pget(p, K_SSO_ACCOUNT))
        return bt_aws_plan_sso(pl, p, err, errlen);
    int rc = bt_aws_plan_static(pl, p, err, errlen);
    if (rc <= 0)
        return rc;
    for (int s = 0; s < 2; s++) {
        if (!p->process[s])
            continue;
        pl->kind = S_PROCESS;
        pl->cmd = bt_xstrdup(p->process[s]);
        snprintf(pl->where, sizeof pl->where, "profile %s in %s", p->name, p->path[s]);
        bt_strlcpy(pl->src_profile, p->name, sizeof pl->src_profile);
        return 0;
    }
    return 1;
}

static void static_start(struct bt_aws_job *j)
{
    bt_aws_job_got(j, &j->pl.creds);
}

const struct bt_aws_provider bt_aws_provider_static = {.name = "static keys", .start = static_start};
