"""The serving layer: how a query travels from a request to an answer.

1. The web app (``web/sparql/endpoint.py``, or a page) checks the query text with :mod:`.guard` and reads
   through a :class:`.pooled.PooledStore`, which charges the call to the requesting client.
2. :class:`.pool.QueryPool` answers a cacheable call from :mod:`.cache` if it can; otherwise the call
   (a module-level function and its arguments, e.g. :func:`.worker.serialise`) waits its turn in
   :mod:`.fairshare` and is sent to a thread of the worker process.
3. The worker (:mod:`.worker`), forked from a zygote that :mod:`.sandbox` has cut off from the network,
   runs ``function(store, *args)`` and sends back one typed reply: a value, a serialised answer (in
   memory, or in a spool file when large), or an exception. At the deadline the pool kills the worker
   and forks another; :mod:`.memory` gives freed heap back after large answers.
4. The domain's exceptions say what went wrong; ``web/errors.py`` maps them to HTTP statuses.
"""
