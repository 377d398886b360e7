/* AWS credentials, Region and endpoints, resolved the way the AWS CLI does:
 * environment, shared files (~/.aws/credentials, ~/.aws/config), credential_process,
 * container credentials, IMDSv2. Messages never contain a secret value. */
#ifndef BEDTOP_AWSAUTH_H
#define BEDTOP_AWSAUTH_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "collectors/sigv4.h"

struct bt_aws_profile_opts { const char *profile; const char *region; const char *endpoint_url; };

/* Resolves credentials in the AWS CLI order: env AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY(+AWS_SESSION_TOKEN)
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
