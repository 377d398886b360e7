/* What STS answers (query protocol, XML parsed with expat): AssumeRole,
 * AssumeRoleWithWebIdentity and GetCallerIdentity results and ErrorResponse
 * documents, then the ARN of whatever was parsed as the identity shown. */
#include <string.h>

#include "aws/sts.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct bt_sts_result r;
    int rc = bt_sts_parse((const char *)data, size, &r);
    if (rc < 0 && !r.message[0])
        abort(); /* a refusal must say why */
    if (rc == 0 && r.creds.access_key[0] && !r.creds.secret_key[0])
        abort(); /* credentials are whole or absent */
    char account[16], role[64];
    if (bt_arn_identity(r.arn, account, sizeof account, role, sizeof role) && strlen(account) != 12)
        abort();
    bt_sts_result_clear(&r);
    return 0;
}
