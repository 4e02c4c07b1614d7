#!/bin/bash
set -euo pipefail
printf '#!/bin/bash\necho "Hello, $(cat /app/config.txt)!"\n' > /app/greet.sh
