/* AWS credentials, Region and endpoints, resolved the way the AWS CLI does:
 * environment, shared files (~/.aws/credentials, ~/.aws/config), credential_process,
 * container credentials, IMDSv2. Messages never contain a secret value. */
#ifndef BEDTOP_AWSAUTH_H
#define BEDTOP_AWSAUTH_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "aws/sigv4.h"

struct bt_aws_profile_opts { const char *profile; const char *region; const char *endpoint_url; };

struct bt_http;
struct bt_aws_job;

/* The AWS CLI's credential chain, run without blocking inside a bt_http (net/http.h):
 *  1. environment AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY(+AWS_SESSION_TOKEN), not with --profile;
 *  2. assume role: the profile's role_arn with source_profile (a chain of any length, loops refused) or
 *     credential_source (Environment, Ec2InstanceMetadata, EcsContainer); role_session_name,
 *     external_id, duration_seconds, mfa_serial; STS AssumeRole, SigV4-signed;
 *  3. web identity: AWS_WEB_IDENTITY_TOKEN_FILE + AWS_ROLE_ARN (+AWS_ROLE_SESSION_NAME) unless --profile,
 *     else the profile's web_identity_token_file + role_arn; AssumeRoleWithWebIdentity, unsigned, the
 *     token file read again on every refresh;
 *  4. IAM Identity Center: sso_session + [sso-session NAME], or the legacy sso_start_url/sso_region/
 *     sso_account_id/sso_role_name; the token cached by `aws sso login` in ~/.aws/sso/cache/, refreshed
 *     through SSO OIDC CreateToken within 15 minutes of expiry and written back (0600);
 *  5. the profile's static keys; 6. its credential_process (a child with a deadline);
 *  7. container credentials; 8. IMDSv2.
 * STS is sts.REGION.amazonaws.com (AWS_ENDPOINT_URL_STS, AWS_ENDPOINT_URL, sts_regional_endpoints);
 * the SSO portal and OIDC honour AWS_ENDPOINT_URL_SSO and AWS_ENDPOINT_URL_SSO_OIDC.
 * Returns 0 when the answer is known now (out set: static keys), 1 when a job was started (cb runs
 * once, later, from bt_http_poll: c on success, else err, one line naming the profile and role; the
 * job then frees itself), -1 with err. Never a secret in err. */
typedef void (*bt_aws_job_cb)(void *arg, const struct bt_creds *c, const char *err);
int bt_aws_creds_start(struct bt_http *h, const struct bt_aws_profile_opts *o, struct bt_creds *out,
                       bt_aws_job_cb cb, void *arg, struct bt_aws_job **job, char *err, size_t errlen);
/* Stops a running job (kills its child, drops its requests) without calling back. */
void bt_aws_job_cancel(struct bt_aws_job *j);

/* MFA codes for role hops with mfa_serial come from this prompt (0 with the code, else -1); with
 * none set, such a profile is an error. Credentials obtained with a code are kept for the session. */
typedef int (*bt_aws_mfa_prompt_fn)(const char *serial, char *code, size_t n, void *arg);
void bt_aws_set_mfa_prompt(bt_aws_mfa_prompt_fn fn, void *arg);
/* The STS endpoint and signing Region the chain uses for profile o (o->endpoint_url does not
 * apply, as --endpoint-url in the CLI is for the command's own service). 0 or -1. */
int bt_aws_sts_endpoint(const struct bt_aws_profile_opts *o, char *url, size_t n, char *region, size_t rn);
/* True when resolving o needs an MFA code that is not cached yet. */
bool bt_aws_profile_needs_mfa(const struct bt_aws_profile_opts *o);
void bt_aws_forget_cached(void);

/* The same chain, blocking until done (a private event loop): tests and start-up. Resolves in the AWS CLI order: env AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY(+AWS_SESSION_TOKEN)
 * (only when no explicit --profile), then the profile (--profile, else AWS_PROFILE, else "default") from
 * AWS_SHARED_CREDENTIALS_FILE (default ~/.aws/credentials, section [name]) and AWS_CONFIG_FILE (default
 * ~/.aws/config, section [profile name] or [default]): static keys, credential_process, then container
 * credentials (AWS_CONTAINER_CREDENTIALS_FULL_URI / _RELATIVE_URI with host 169.254.170.2, optional
 * AWS_CONTAINER_AUTHORIZATION_TOKEN / _FILE), then IMDSv2 (skipped when AWS_EC2_METADATA_DISABLED=true;
 * endpoint override AWS_EC2_METADATA_SERVICE_ENDPOINT).
 * out must be zeroed or hold earlier creds (they are replaced). Returns 0, or -1 with ONE line in err
 * naming what was tried (or the source that failed); never a secret in it. Blocks for at most a few
 * seconds (HTTP) or the credential_process timeout. */
int bt_aws_resolve_creds(const struct bt_aws_profile_opts *o, struct bt_creds *out, char *err, size_t errlen);

/* Region: --region, AWS_REGION, AWS_DEFAULT_REGION, profile's region; err if none or malformed. */
int bt_aws_resolve_region(const struct bt_aws_profile_opts *o, char *out, size_t n, char *err, size_t errlen);

/* Endpoint for a service ("monitoring" -> env AWS_ENDPOINT_URL_CLOUDWATCH, "servicequotas" ->
 * AWS_ENDPOINT_URL_SERVICE_QUOTAS): --endpoint-url, service env var, AWS_ENDPOINT_URL, profile's
 * endpoint_url, else https://<service>.<region>.amazonaws.com (.com.cn for cn- Regions).
 * AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true skips the env and profile steps, as in the CLI.
 * Trailing slashes are dropped. Returns 0, or -1 (not http(s)://, no Region, or n too small). */
int bt_aws_endpoint(const struct bt_aws_profile_opts *o, const char *service, const char *region, char *out, size_t n);

/* True when creds expire within margin seconds (refresh before expiry: 5 minutes, as the SDKs do). */
bool bt_creds_need_refresh(const struct bt_creds *c, int64_t now, int margin);

/* Warn (true + msg) when a credentials file is readable or writable by group/others (mode & 077). */
bool bt_aws_check_file_perms(const char *path, char *msg, size_t n);

/* The shared file paths the chain reads (env override, ~ expanded), e.g. to check their modes. */
void bt_aws_credentials_file(char *out, size_t n);
void bt_aws_config_file(char *out, size_t n);

/* Parses credential_process stdout: {"Version":1,"AccessKeyId","SecretAccessKey","SessionToken",
 * "Expiration"}. out must be zeroed or hold creds (replaced on success). Returns 0 or -1 + err. */
int bt_aws_parse_process_output(const char *json, size_t len, struct bt_creds *out, char *err, size_t errlen);

/* credential_process timeout in ms (default 30000); tests shorten it. */
void bt_aws_set_process_timeout(int ms);
#endif
