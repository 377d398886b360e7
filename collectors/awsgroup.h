/* Routes grouped for AWS API calls: one credential provider per profile
 * (refreshed through the credential chain) and one group per (profile,
 * Region) with its endpoint URL. Shared by the CloudWatch and Service Quotas
 * collectors. */
#ifndef BEDTOP_AWSGROUP_H
#define BEDTOP_AWSGROUP_H
#include <stdbool.h>
#include <stddef.h>

#include "aws/awsauth.h"
#include "collectors/collector.h"
#include "aws/policy.h"
#include "net/http.h"
#include "core/apicost.h"
#include "core/util.h"

struct bt_awsgroup_provider {
    char profile[64];
    char region[32];
    char endpoint_url[512];
    struct bt_aws_profile_opts opts;   /* points into the strings above */
    struct bt_creds_provider p;
    struct bt_aws_job *job;            /* a refresh in flight, NULL none */
    struct bt_http *h;
    char shown[128];                   /* the identity --verbose last named */
};

struct bt_awsgroup {
    int provider;            /* index into bt_awsgroups.prov */
    char profile[64];
    char region[32];
    char url[512];           /* "" when no endpoint could be resolved (error says why) */
    char error[224];
    int *routes;             /* indices into cfg->routes */
    int nroutes;
};

struct bt_awsgroups {
    struct bt_api_cost *cost;           /* ctx->api_cost: requests counted by API and outcome */
    struct bt_awsgroup_provider *prov;  /* never reallocated: requests point at providers */
    int nprov;
    struct bt_awsgroup *g;
    int n;
};

/* Groups the routes (runtime only when runtime_only) for service
 * ("monitoring", "servicequotas"); route Region, then --region, then the
 * config, then the profile's/environment's Region. */
void bt_awsgroups_build(struct bt_awsgroups *gs, const struct bt_ctx *ctx, const char *service,
                        bool runtime_only);
/* A provider for one profile outside any grouping (route discovery). */
void bt_awsgroup_provider_init(struct bt_awsgroup_provider *p, const char *profile,
                               const char *region, const char *endpoint_url);
void bt_awsgroup_provider_free(struct bt_awsgroup_provider *p);
void bt_awsgroups_free(struct bt_awsgroups *gs);
/* The Region a route is polled in ("" when none can be found). */
void bt_awsgroup_route_region(const struct bt_ctx *ctx, const struct bt_route *r, char *out,
                              size_t n);
/* One line naming an HTTP failure for an event: "ThrottlingException after 3
 * attempts: Rate exceeded" or "connection refused (http://127.0.0.1:9/)";
 * AWS messages are cut before anything that could echo a request (canonical
 * request, string to sign). */
void bt_awsgroup_describe(const struct bt_http_resp *resp, char *out, size_t n);
/* Seconds per attempt for the collectors' requests (0: the HTTP layer's 10 s);
 * tests shorten it. */
void bt_awsgroup_set_timeout(double seconds);
/* A signed AWS JSON-protocol POST of group g: X-Amz-Target target_prefix + op,
 * labelled "<label> <op>" for --verbose and errors. body NULL: body_fn(body_arg, out)
 * writes it when the request starts (struct bt_http_req's body_fn). */
void bt_awsgroup_submit(struct bt_awsgroups *gs, const struct bt_awsgroup *g, struct bt_http *h,
                        const char *service, const char *target_prefix, const char *content_type,
                        const char *label, const char *op, const struct bt_buf *body,
                        void (*body_fn)(void *body_arg, struct bt_buf *out), void *body_arg,
                        bt_http_cb cb, void *arg);
/* Warns on stderr, once per file, when the shared credentials/config files are
 * readable by others. The dashboard calls it before the screen is taken. */
void bt_awsgroup_warn_file_perms(void);
double bt_awsgroup_timeout(void);
/* Before the loop starts (and before a dashboard takes the screen): every profile in use
 * whose role chain has mfa_serial is resolved now, asking prompt for the code (the
 * credentials are then kept for the session, as the CLI caches them). prompt NULL (no
 * terminal): -1 with a one-line err. 0 when nothing needed a code or all were resolved. */
int bt_awsgroup_mfa_preflight(const struct bt_ctx *ctx, bt_aws_mfa_prompt_fn prompt, char *err, size_t errlen);
#endif
