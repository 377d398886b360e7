/* credential_process stdout: {"Version":1,"AccessKeyId",...}. */
#include <string.h>

#include "aws/awsauth.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct bt_creds c;
    memset(&c, 0, sizeof c);
    char err[256] = "";
    int rc = bt_aws_parse_process_output((const char *)data, size, &c, err, sizeof err);
    FUZZ_NEED_ERR(rc == 0, err);
    if (rc == 0 && (!c.access_key[0] || !c.secret_key[0]))
        abort(); /* success means usable keys */
    bt_creds_clear(&c);
    return 0;
}
