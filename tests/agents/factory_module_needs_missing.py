"""A user's agent module whose own import fails: the MODULE:FACTORY error must name the missing dependency."""
import no_such_dependency_here  # type: ignore[import-not-found]  # noqa: F401
