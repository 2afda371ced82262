"""One mutant per file: each module defines ``MUTANT`` (see ``sims.mutate.core``)."""
