"""Sandbox escapes from the adversarial pass (issue 13): no Python internals, files or environment reached.

Each try is a classic Jinja server-side template injection.  A try passes when the render is refused with a
TemplateError (any kind: ``security`` for a blocked attribute, ``render`` for a missing loader, ...) or
renders text that holds no Python object, no file content and no environment value.  The render runs in
the worker, like every render.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.template.render import TemplateError, render

MESSAGES = [{"role": "user", "content": "Hi"}]
SECRET = "s3cr3t-value-4711"
#: What leaks look like: a Python object's repr, a file's lines, a command's output, the secret.
LEAKS = ("<class", "<function", "<module", "<built-in", "<frame", "module ", "root:", "uid=", SECRET)

SANDBOX_TRIES = {
    "mro_subclasses": "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "class_attr": "{{ ''.__class__ }}",
    "cycler_globals": "{{ cycler.__init__.__globals__.os.environ }}",
    "joiner_globals": "{{ joiner.__init__.__globals__ }}",
    "namespace_globals": "{{ namespace.__init__.__globals__ }}",
    "lipsum_globals": "{{ lipsum.__globals__['os'].popen('id').read() }}",
    "raise_exception_globals": "{{ raise_exception.__globals__ }}",
    "self_context": "{{ self._TemplateReference__context }}",
    "format_attr": "{{ '{0.__class__.__mro__}'.format(1) }}",
    "format_map": "{{ '{0.__globals__}'.format_map({'0': cycler.__init__}) }}",
    "format_filter_attr": "{{ '%s'|format(''.__class__) }}",
    "import_os": "{% import 'os' as os %}{{ os }}",
    "include_passwd": "{% include '/etc/passwd' %}",
    "extends_passwd": "{% extends '/etc/passwd' %}",
    "from_import": "{% from '/etc/passwd' import x %}",
    "attr_filter": "{{ ''|attr('__class__')|attr('__mro__') }}",
    "attr_filter_escaped": "{{ ''|attr('\\x5f\\x5fclass\\x5f\\x5f') }}",
    "getitem_dunder": "{{ ''['__class__'] }}",
    "messages_class": "{{ messages.__class__.__base__.__subclasses__() }}",
    "dict_items_gi": "{{ {}.items().__iter__().gi_frame }}",
    "generator_frame": "{% set g = (x for x in [1]) %}{{ g.gi_frame.f_globals }}",
    "loop_frame": "{% for x in [1] %}{{ loop.__class__.__init__.__globals__ }}{% endfor %}",
    "range_self": "{{ range.__self__ }}",
    "func_code": "{{ raise_exception.__code__.co_consts }}",
    "str_mod_dunder": "{{ '%(a)s' % {'a': ''.__class__} }}",
    "tojson_globals": "{{ tojson.__globals__ }}",
    "environ_via_config": "{{ config }}{{ request }}{{ os }}{{ environ }}",
    "env_attr": "{{ self.__init__.__globals__ }}",
    "macro_globals": "{% macro m() %}{% endmacro %}{{ m.__init__.__globals__ }}",
    "caller_globals": "{% macro m() %}{{ caller.__globals__ }}{% endmacro %}{% call m() %}{% endcall %}",
    "list_pop_builtin": "{{ [].pop.__self__.__class__ }}",
    "dict_update_self": "{{ {}.update.__self__.__class__.__subclasses__() }}",
    "strftime_now": "{{ strftime_now.__globals__ }}",
    "set_dunder": "{% set x = ''.__class__ %}{{ x }}",
    "mutate_global": "{% set _ = messages.append(1) %}{{ messages|length }}",
    "unsafe_callable": "{{ ''.join.__self__.__class__.__subclasses__() }}",
}


@pytest.mark.parametrize("name", sorted(SANDBOX_TRIES))
def test_no_sandbox_escape(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WB_SANDBOX_SECRET", SECRET)
    try:
        out = render(SANDBOX_TRIES[name], MESSAGES, time_limit=2.0)
    except TemplateError as exc:
        assert "\n" not in str(exc).strip() and SECRET not in str(exc)
        return
    assert not any(leak in out for leak in LEAKS), out[:200]


def test_a_template_cannot_read_a_file_by_path(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET, encoding="utf-8")
    for source in (
        f"{{% include {str(secret)!r} %}}",
        f"{{% extends {str(secret)!r} %}}",
        f"{{% import {str(secret)!r} as s %}}",
        f"{{{{ lipsum.__globals__['open']({str(secret)!r}).read() }}}}",
    ):
        try:
            out = render(source, MESSAGES, time_limit=2.0)
        except TemplateError as exc:
            assert SECRET not in str(exc)
            continue
        assert SECRET not in out
