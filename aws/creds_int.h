/* Inside the credential chain (aws/awsauth.c and one aws/creds_*.c per provider): the
 * profile read from the shared files, the plan built from it (one source of credentials,
 * then zero or more AssumeRole hops) and the job that runs the plan inside a bt_http.
 * Nothing outside aws/ includes this; the public interface is aws/awsauth.h. */
#ifndef BEDTOP_CREDS_INT_H
#define BEDTOP_CREDS_INT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <cjson/cJSON.h>

#include "aws/awsauth.h"
#include "core/util.h"
#include "aws/policy.h"
#include "net/http.h"

#define MAX_VALUE (16 * 1024)       /* longest shared-file value we keep (tokens are ~2 KB) */
#define MAX_PROCESS_OUT (64 * 1024) /* credential_process stdout bound */
#define PATH_LEN 1024
#define MAX_HOPS 16

/* ---- helpers every provider uses (aws/creds.c) ---- */
void bt_aws_seterr(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
const char *bt_aws_env(const char *name);     /* getenv, NULL when unset or empty */
bool bt_aws_env_true(const char *name);
/* Copies s for a message: printable ASCII only, bounded, so outside text cannot forge lines. */
void bt_aws_safe_copy(char *dst, size_t n, const char *s, size_t maxlen);
/* A token goes into a header: no control characters, bounded. */
bool bt_aws_valid_token(const char *s);
/* Fills c from the pieces; err names `what` (never the values) on a bad piece. */
int bt_aws_creds_set(struct bt_creds *c, const char *akid, const char *secret, const char *token,
                     const char *what, char *err, size_t errlen);
/* The parsed tree holds the secret: wipe its strings before freeing. */
void bt_aws_wipe_json(cJSON *node);
/* {AccessKeyId, SecretAccessKey, SessionToken|Token, Expiration}: credential_process (process,
 * with Version 1) or the container endpoint and IMDS (Token, optional Code). */
int bt_aws_creds_from_json(const char *json, size_t len, bool process, struct bt_creds *out,
                           const char *what, char *err, size_t errlen);
void bt_aws_wipe_buf(struct bt_buf *b);
/* Sets c->source, the label that names where credentials came from. A label longer than
 * its field (a deep path) is cut on a character boundary and ends in "...", never silently. */
void bt_aws_creds_source(struct bt_creds *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- the shared files (aws/profile.c) ---- */
enum { SRC_CREDS, SRC_CONFIG };

/* Keys of a profile (or an sso-session section) beyond static keys. */
enum { K_ROLE_ARN, K_SOURCE_PROFILE, K_CRED_SOURCE, K_SESSION_NAME, K_EXTERNAL_ID, K_DURATION,
       K_MFA_SERIAL, K_WEB_TOKEN_FILE, K_SSO_SESSION, K_SSO_START_URL, K_SSO_REGION, K_SSO_ACCOUNT,
       K_SSO_ROLE, K_SSO_SCOPES, K_STS_REGIONAL, NKEYS };

/* What one profile says, from both files; [SRC_CREDS] wins over [SRC_CONFIG] as in the CLI. */
struct profile {
    char name[128];
    char path[2][PATH_LEN];
    bool file_exists[2];
    bool section_found[2];
    char *akid[2], *secret[2], *token[2], *process[2];
    char *region, *endpoint_url;
    char *kv[2][NKEYS];   /* the other keys the chain reads (role_arn, sso_*, ...) */
    char *sso_kv[NKEYS];  /* from [sso-session NAME] when the profile names one */
    bool sso_section_found;
    char bad_key[64];     /* a value that was too long */
    int bad_src;
};

const char *bt_aws_home_dir(void);
/* A key of either file (the credentials file wins, as in botocore's merged profile). */
const char *bt_aws_pget(const struct profile *p, int k);
/* Loads the profile from both files. -1 + err on unreadable or malformed files. */
int bt_aws_profile_load(struct profile *p, const char *name, char *err, size_t errlen);
void bt_aws_profile_free(struct profile *p);
/* --profile, else AWS_PROFILE, else "default"; *explicit_name when one of the first two. */
const char *bt_aws_profile_name(const struct bt_aws_profile_opts *o, bool *explicit_name);

/* ---- the plan ---- */
enum src_kind { S_STATIC, S_PROCESS, S_CONTAINER, S_IMDS, S_SSO, S_WEB };

struct hop {
    char profile[128];
    char role_arn[256], session_name[128], external_id[256], mfa_serial[256];
    int duration;
};

struct plan {
    char top[128];              /* the profile asked for */
    bool explicit_profile;
    enum src_kind kind;
    char src_profile[128];      /* the profile holding the source ("" for the environment) */
    struct bt_creds creds;      /* S_STATIC */
    char *cmd;                  /* S_PROCESS */
    char where[PATH_LEN + 160];
    /* S_SSO */
    char sso_session[128], sso_start_url[512], sso_region[32], sso_account[32], sso_role[128];
    char sso_url[512], oidc_url[512];
    /* S_WEB */
    char token_file[PATH_LEN], web_role_arn[256], web_session[128];
    struct hop hops[MAX_HOPS];  /* hops[0] is assumed with the source's creds, and so on */
    int nhops;
    char sts_url[512], sts_region[32];
    char tried[1024];           /* S_IMDS as the last resort: what was tried before */
};

/* Planning returns 0 (planned), -1 (err) or, where it says so, 1 (nothing configured).
 * The planners call downwards only: awsauth.c -> creds_assume.c -> creds_plan.c ->
 * creds_web.c, creds_sso.c; creds_env.c and region.c are leaves. */
bool bt_aws_valid_region(const char *s);                                      /* aws/region.c */
void bt_aws_plan_sts_endpoint(struct plan *pl, const struct bt_aws_profile_opts *o, const struct profile *top);
bool bt_aws_has_static(const struct profile *p);                              /* aws/creds_plan.c */
bool bt_aws_has_assume_role(const struct profile *p);     /* role_arn with a source */
int bt_aws_plan_static(struct plan *pl, const struct profile *p, char *err, size_t errlen); /* 1: no keys */
/* Web identity, SSO, static keys, credential_process of a profile without role_arn + source. */
int bt_aws_plan_profile(struct plan *pl, const struct profile *p, bool env_web, char *err, size_t errlen);
void bt_aws_plan_free(struct plan *pl);
bool bt_aws_env_static_present(void);                                         /* aws/creds_env.c */
int bt_aws_plan_env(struct plan *pl, char *err, size_t errlen);
int bt_aws_plan_sso(struct plan *pl, const struct profile *p, char *err, size_t errlen);  /* creds_sso.c */
int bt_aws_plan_web(struct plan *pl, const char *file, const char *role, const char *session, const char *who,
                    char *err, size_t errlen);                                /* aws/creds_web.c */
int bt_aws_plan_assume(struct plan *pl, const struct profile *p, char visited[][128], int nvisited,
                       char *err, size_t errlen);                              /* aws/creds_assume.c */
bool bt_aws_plan_needs_mfa(const struct plan *pl);
const struct bt_creds *bt_aws_mfa_cached(const char *profile);
void bt_aws_mfa_store(const char *profile, const struct bt_creds *c);

/* ---- the job: runs a plan inside a bt_http, never blocking ----
 * awsauth.c drives it: it builds the plan, starts the plan's provider through the table
 * below, runs the AssumeRole hops, and ends the job. A provider never calls awsauth.c: what a
 * step needs to end (credentials, a failure, a request) reaches it through j->ops, which
 * awsauth.c fills in and the bt_aws_job_* helpers of creds.c call. */
struct bt_aws_job;
typedef void (*bt_aws_answer_fn)(struct bt_aws_job *j, const struct bt_http_resp *r);

struct bt_aws_job_ops {
    void (*got)(struct bt_aws_job *j, const struct bt_creds *c);   /* on to the next hop, or done */
    void (*fail)(struct bt_aws_job *j, const char *err);           /* one line; the job is freed */
    int (*submit)(struct bt_aws_job *j, bt_aws_answer_fn answer, struct bt_http_req *req);
};

/* One source of credentials (as a collector is a bt_collector_ops). */
struct bt_aws_provider {
    const char *name;                        /* "credential_process", "IMDSv2", ... */
    void (*start)(struct bt_aws_job *j);     /* the first step; ends through j->ops */
    void (*release)(struct bt_aws_job *j);   /* what a step holds (a child, a token); NULL: nothing */
};

/* The table awsauth.c drives, one per enum src_kind, and the AssumeRole hop (its start runs
 * j->pl.hops[j->hop - 1]). */
extern const struct bt_aws_provider bt_aws_provider_static;     /* aws/creds_plan.c */
extern const struct bt_aws_provider bt_aws_provider_process;    /* aws/creds_process.c */
extern const struct bt_aws_provider bt_aws_provider_container;  /* aws/creds_container.c */
extern const struct bt_aws_provider bt_aws_provider_imds;       /* aws/creds_imds.c */
extern const struct bt_aws_provider bt_aws_provider_sso;        /* aws/creds_sso.c */
extern const struct bt_aws_provider bt_aws_provider_web;        /* aws/creds_web.c */
extern const struct bt_aws_provider bt_aws_provider_assume;     /* aws/creds_assume.c */

struct bt_aws_job {
    const struct bt_aws_job_ops *ops; /* awsauth.c's: how a step ends */
    struct bt_http *h;
    struct plan pl;
    int hop;                         /* next hop to run */
    struct bt_creds cur;             /* what the last step produced */
    struct bt_creds_provider signer; /* cur, for signing AssumeRole */
    bt_aws_job_cb cb;
    void *arg;
    bt_aws_answer_fn answer;         /* who reads the answer of the one request in flight */
    /* credential_process */
    pid_t pid;
    int status;
    int fd[2];                       /* stdout, stderr read ends; -1 closed */
    struct bt_buf out, errb;
    bool too_big;
    int64_t deadline;
    char name[96];
    /* IMDSv2 */
    int imds_stage;
    char *imds_token;
    char imds_role[160];
    char imds_base[512];
    /* IAM Identity Center */
    char cache_path[PATH_LEN];
    cJSON *cache;                    /* the token cache file, as read */
};

/* Each step ends in exactly one of these: credentials (on to the next hop, or done) or a
 * failure (one line; the job is freed and calls back). They call j->ops (aws/creds.c). */
void bt_aws_job_got(struct bt_aws_job *j, const struct bt_creds *c);
void bt_aws_job_fail(struct bt_aws_job *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A job has one request in flight at a time; answer reads what comes back. */
int bt_aws_job_submit(struct bt_aws_job *j, bt_aws_answer_fn answer, struct bt_http_req *req);
/* The container endpoint's and IMDS's JSON answer {AccessKeyId, SecretAccessKey, Token, Expiration}. */
void bt_aws_job_json_creds(struct bt_aws_job *j, const struct bt_http_resp *r, const char *what,
                           const char *source);

/* An STS AssumeRole* answer: credentials, or a failure naming what and the code's remedy
 * (aws/creds_assume.c; the web identity provider reads its answer with it too). */
void bt_aws_sts_answer(struct bt_aws_job *j, const struct bt_http_resp *r, const char *what, const char *prof);
#endif
