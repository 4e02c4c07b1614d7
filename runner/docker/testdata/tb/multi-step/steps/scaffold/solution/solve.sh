#!/bin/bash
set -euo pipefail
printf '#!/bin/bash\necho hello\n' > /app/greet.sh
chmod +x /app/greet.sh
