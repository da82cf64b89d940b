"""Opens an old store with today's migrations plus one slow last step, to be killed inside it.

Run by test_upgrades.py, which SIGKILLs this process while the migration's transaction runs.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from countbot.store.database import Database
from countbot.store.schema import MIGRATIONS

# Enough rows that the transaction lasts a while on any machine.
SLOW = """
CREATE TABLE slow_migration (n INTEGER, pad TEXT);
WITH RECURSIVE k(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM k WHERE n < 3000000)
INSERT INTO slow_migration SELECT n, hex(randomblob(16)) FROM k;
"""


async def main(path: Path) -> None:
    print("opening", flush=True)
    db = await Database.open(path, [*MIGRATIONS, SLOW])
    await db.close()


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1])))
