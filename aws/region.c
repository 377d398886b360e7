/* Region and endpoints as the AWS CLI picks them: --region, the environment, the
 * profile; per-service endpoint variables; the STS endpoint of the credential chain. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws/creds_int.h"

static const char *const legacy_global_regions[] = {
    "ap-northeast-1", "ap-south-1", "ap-southeast-1", "ap-southeast-2", "aws-global", "ca-central-1",
    "eu-central-1", "eu-north-1", "eu-west-1", "eu-west-2", "eu-west-3", "sa-east-1", "us-east-1",
    "us-east-2", "us-west-1", "us-west-2",
};

/* STS endpoint as botocore picks it: AWS_ENDPOINT_URL_STS, AWS_ENDPOINT_URL, the profile's
 * endpoint_url, else sts.REGION.amazonaws.com (sts_regional_endpoints=regional, the default) or
 * the global sts.amazonaws.com (legacy mode for the legacy Regions, or no Region at all).
 * --endpoint-url is for the dashboard's own services and does not apply, as in the CLI. */
void bt_aws_plan_sts_endpoint(struct plan *pl, const struct bt_aws_profile_opts *o, const struct profile *top)
{
    const char *region = o && o->region && *o->region ? o->region
                       : bt_aws_env("AWS_REGION") ? getenv("AWS_REGION")
                       : bt_aws_env("AWS_DEFAULT_REGION") ? getenv("AWS_DEFAULT_REGION")
                       : top->region;
    if (region && !bt_aws_valid_region(region))
        region = NULL;
    const char *mode = bt_aws_env("AWS_STS_REGIONAL_ENDPOINTS");
    if (!mode)
        mode = bt_aws_pget(top, K_STS_REGIONAL);
    bool legacy = mode && bt_streq_nocase(mode, "legacy");
    bool global = !region;
    for (size_t i = 0; legacy && region && i < BT_ARRAY_LEN(legacy_global_regions); i++)
        if (strcmp(region, legacy_global_regions[i]) == 0)
            global = true;
    bt_strlcpy(pl->sts_region, global ? "us-east-1" : region, sizeof pl->sts_region);
    struct bt_aws_profile_opts so = {.profile = top->name};
    if (bt_aws_endpoint(&so, "sts", pl->sts_region, pl->sts_url, sizeof pl->sts_url) != 0 || global) {
        char tmp[512];
        if (global && bt_aws_endpoint(&so, "sts", NULL, tmp, sizeof tmp) == 0)
            bt_strlcpy(pl->sts_url, tmp, sizeof pl->sts_url);
        else if (global)
            bt_strlcpy(pl->sts_url, "https://sts.amazonaws.com", sizeof pl->sts_url);
    }
}
int bt_aws_sts_endpoint(const struct bt_aws_profile_opts *o, char *url, size_t n, char *region, size_t rn)
{
    struct plan pl;
    memset(&pl, 0, sizeof pl);
    struct profile p;
    char err[256];
    bool explicit_name;
    if (bt_aws_profile_load(&p, bt_aws_profile_name(o, &explicit_name), err, sizeof err) != 0) {
        bt_aws_profile_free(&p);
        return -1;
    }
    bt_aws_plan_sts_endpoint(&pl, o, &p);
    bt_aws_profile_free(&p);
    bt_strlcpy(url, pl.sts_url, n);
    bt_strlcpy(region, pl.sts_region, rn);
    return pl.sts_url[0] ? 0 : -1;
}
bool bt_aws_valid_region(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 63)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
            return false;
    }
    return true;
}

int bt_aws_resolve_region(const struct bt_aws_profile_opts *o, char *out, size_t n, char *err, size_t errlen)
{
    const char *from = NULL, *val = NULL;
    char *owned = NULL;
    bool explicit_name;
    const char *name = bt_aws_profile_name(o, &explicit_name);
    char cfg[PATH_LEN];
    bt_aws_config_file(cfg, sizeof cfg);
    if (o && o->region && *o->region) {
        val = o->region;
        from = "--region";
    } else if (bt_aws_env("AWS_REGION")) {
        val = getenv("AWS_REGION");
        from = "AWS_REGION";
    } else if (bt_aws_env("AWS_DEFAULT_REGION")) {
        val = getenv("AWS_DEFAULT_REGION");
        from = "AWS_DEFAULT_REGION";
    } else {
        struct profile p;
        char perr[512];
        if (bt_aws_profile_load(&p, name, perr, sizeof perr) != 0) {
            bt_aws_profile_free(&p);
            bt_aws_seterr(err, errlen, "%s", perr);
            return -1;
        }
        if (p.region && *p.region)
            owned = bt_xstrdup(p.region);
        bt_aws_profile_free(&p);
        val = owned;
        from = "the profile";
    }
    if (!val) {
        bt_aws_seterr(err, errlen, "no AWS Region: use --region, AWS_REGION or AWS_DEFAULT_REGION, or set region in "
               "profile \"%s\" (%s)", name, cfg);
        return -1;
    }
    char safe[80];
    bt_aws_safe_copy(safe, sizeof safe, val, 70);
    int rc = 0;
    if (!bt_aws_valid_region(val)) {
        if (owned)
            bt_aws_seterr(err, errlen, "region \"%s\" in profile \"%s\" (%s) is not a Region name", safe, name, cfg);
        else
            bt_aws_seterr(err, errlen, "region \"%s\" from %s is not a Region name", safe, from);
        rc = -1;
    } else if (bt_strlcpy(out, val, n) >= n) {
        bt_aws_seterr(err, errlen, "region \"%s\" is too long", safe);
        rc = -1;
    }
    free(owned);
    return rc;
}

/* Service id -> its AWS_ENDPOINT_URL_<ID> variable (the CLI's documented names). */
static const struct {
    const char *service;
    const char *env;
} service_env[] = {
    {.service = "monitoring", .env = "AWS_ENDPOINT_URL_CLOUDWATCH"},
    {.service = "servicequotas", .env = "AWS_ENDPOINT_URL_SERVICE_QUOTAS"},
    {.service = "bedrock", .env = "AWS_ENDPOINT_URL_BEDROCK"},
    {.service = "sts", .env = "AWS_ENDPOINT_URL_STS"},
    {.service = "portal.sso", .env = "AWS_ENDPOINT_URL_SSO"},
    {.service = "oidc", .env = "AWS_ENDPOINT_URL_SSO_OIDC"},
};

static int put_endpoint(const char *url, char *out, size_t n)
{
    if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0)
        return -1;
    size_t len = strlen(url);
    while (len > 8 && url[len - 1] == '/')
        len--;
    if (len >= n)
        return -1;
    memcpy(out, url, len);
    out[len] = '\0';
    return 0;
}

int bt_aws_endpoint(const struct bt_aws_profile_opts *o, const char *service, const char *region, char *out, size_t n)
{
    if (!service || !*service || !out || !n)
        return -1;
    if (o && o->endpoint_url && *o->endpoint_url)
        return put_endpoint(o->endpoint_url, out, n);
    if (!bt_aws_env_true("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS")) {
        for (size_t i = 0; i < BT_ARRAY_LEN(service_env); i++) {
            if (strcmp(service, service_env[i].service) == 0 && bt_aws_env(service_env[i].env))
                return put_endpoint(getenv(service_env[i].env), out, n);
        }
        if (bt_aws_env("AWS_ENDPOINT_URL"))
            return put_endpoint(getenv("AWS_ENDPOINT_URL"), out, n);
        bool explicit_name;
        struct profile p;
        char perr[512];
        int lrc = bt_aws_profile_load(&p, bt_aws_profile_name(o, &explicit_name), perr, sizeof perr);
        int rc = 1;
        if (lrc == 0 && p.endpoint_url && *p.endpoint_url)
            rc = put_endpoint(p.endpoint_url, out, n);
        bt_aws_profile_free(&p);
        if (rc <= 0)
            return rc;
    }
    if (!region || !bt_aws_valid_region(region))
        return -1;
    int w = snprintf(out, n, "https://%s.%s.amazonaws.com%s", service, region,
                     strncmp(region, "cn-", 3) == 0 ? ".cn" : "");
    return w > 0 && (size_t)w < n ? 0 : -1;
}

