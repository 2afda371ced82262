/* The model's records (NamedTuples) made from compiled code in one allocation.
 *
 * A compiled module calls ``replace_fields`` (model/records.py) where the source says
 * ``record._replace(name=value)`` (setup.py's ``rewrite``), about 30 times a state. Made with
 * ``tuple.__new__(cls, items)`` from compiled code, each record cost an argument tuple, its slice, the
 * parsing of it and a copy of ``items`` (itself made of two slices and a concatenation): 14 % of a
 * compiled run of wide-lost-response. ``replaced`` looks the fields up and allocates the record of
 * the record's own class, filled (what ``tuple.__new__`` does for a subclass, without the rest).
 * Built with the compiled model (setup.py); without it, ``replace_fields`` makes the same value with
 * ``tuple.__new__``.
 *
 * Nothing here knows the model: a record is any tuple, its class is kept, its items are shared.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

PyDoc_STRVAR(replaced_doc,
"replaced(record, index, names, values)\n--\n\n"
"``record`` (a tuple or a subclass) with the item ``index[names[k]]`` made ``values[k]`` for each k,\n"
"of ``record``'s class (``index``: a dict of field name to item; ``names`` and ``values``: two\n"
"tuples of one length; a name given twice takes its last value). None where a name is not in\n"
"``index`` or its item is not one of the record's: the caller's ``_replace`` says what is wrong.");

static PyObject *
replaced(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "replaced takes (record, index, names, values)");
        return NULL;
    }
    PyObject *record = args[0], *index = args[1], *names = args[2], *values = args[3];
    if (!PyTuple_Check(record) || !PyDict_Check(index) || !PyTuple_Check(names) || !PyTuple_Check(values)
            || PyTuple_GET_SIZE(names) != PyTuple_GET_SIZE(values)) {
        PyErr_SetString(PyExc_TypeError, "replaced takes a tuple, a dict and two tuples of one length");
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(record), m = PyTuple_GET_SIZE(names);
    Py_ssize_t at[8];
    if (m > 8)
        Py_RETURN_NONE;
    for (Py_ssize_t k = 0; k < m; k++) {
        PyObject *i = PyDict_GetItemWithError(index, PyTuple_GET_ITEM(names, k));  /* borrowed */
        if (i == NULL) {
            if (PyErr_Occurred())
                return NULL;
            Py_RETURN_NONE;
        }
        at[k] = PyLong_AsSsize_t(i);
        if (at[k] == -1 && PyErr_Occurred())
            return NULL;
        if (at[k] < 0 || at[k] >= n)
            Py_RETURN_NONE;
    }
    PyTypeObject *tp = Py_TYPE(record);
    PyObject *out = tp == &PyTuple_Type ? PyTuple_New(n) : tp->tp_alloc(tp, n);
    if (out == NULL)
        return NULL;
    PyObject **items = ((PyTupleObject *)out)->ob_item, **from = ((PyTupleObject *)record)->ob_item;
    for (Py_ssize_t k = 0; k < n; k++)
        items[k] = from[k];
    for (Py_ssize_t k = 0; k < m; k++)
        items[at[k]] = PyTuple_GET_ITEM(values, k);
    for (Py_ssize_t k = 0; k < n; k++)
        Py_INCREF(items[k]);
    return out;
}

/* --- a record's constructor ---------------------------------------------------------------- */

/* class -> (fields, defaults): its ``_fields`` and the values of its ``_field_defaults`` in field order
 * (the last ``len(defaults)`` fields have one), read once per class */
static PyObject *layouts = NULL;

static PyObject *
layout_of(PyTypeObject *tp)
{
    PyObject *got = PyDict_GetItemWithError(layouts, (PyObject *)tp);  /* borrowed */
    if (got != NULL || PyErr_Occurred())
        return got;
    PyObject *fields = PyObject_GetAttrString((PyObject *)tp, "_fields");
    if (fields == NULL)
        return NULL;
    PyObject *given = PyObject_GetAttrString((PyObject *)tp, "_field_defaults");
    if (given == NULL || !PyTuple_Check(fields) || !PyDict_Check(given)) {
        if (given != NULL || !PyErr_Occurred())
            PyErr_Format(PyExc_TypeError, "%.200s is not a NamedTuple", tp->tp_name);
        Py_DECREF(fields);
        Py_XDECREF(given);
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(fields), first = n;
    while (first > 0 && PyDict_Contains(given, PyTuple_GET_ITEM(fields, first - 1)) == 1)
        first--;
    PyObject *defaults = PyTuple_New(n - first);
    for (Py_ssize_t k = first; defaults != NULL && k < n; k++) {
        PyObject *v = PyDict_GetItemWithError(given, PyTuple_GET_ITEM(fields, k));
        Py_XINCREF(v);
        PyTuple_SET_ITEM(defaults, k - first, v);
    }
    PyObject *layout = defaults == NULL ? NULL : PyTuple_Pack(2, fields, defaults);
    Py_DECREF(fields);
    Py_DECREF(given);
    Py_XDECREF(defaults);
    if (layout == NULL || PyDict_SetItem(layouts, (PyObject *)tp, layout) < 0) {
        Py_XDECREF(layout);
        return NULL;
    }
    Py_DECREF(layout);  /* the dict holds it */
    return layout;
}

static Py_ssize_t
field_at(PyObject *fields, PyObject *name)
{
    Py_ssize_t n = PyTuple_GET_SIZE(fields);
    for (Py_ssize_t k = 0; k < n; k++)
        if (PyTuple_GET_ITEM(fields, k) == name)
            return k;
    for (Py_ssize_t k = 0; k < n; k++) {
        int eq = PyObject_RichCompareBool(PyTuple_GET_ITEM(fields, k), name, Py_EQ);
        if (eq != 0)
            return eq < 0 ? -2 : k;
    }
    return -1;
}

PyDoc_STRVAR(record_new_doc,
"record_new(cls, *values, **named)\n--\n\n"
"A NamedTuple's ``__new__``: a ``cls`` of its fields given by position or by name, the rest\n"
"their defaults (the errors a NamedTuple's own constructor gives).");

static PyObject *
record_new(PyObject *module, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs < 1 || !PyType_Check(args[0]) || !PyType_IsSubtype((PyTypeObject *)args[0], &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError, "record_new takes (cls, *values, **named), cls a NamedTuple");
        return NULL;
    }
    PyTypeObject *tp = (PyTypeObject *)args[0];
    PyObject *layout = layout_of(tp);
    if (layout == NULL)
        return NULL;
    PyObject *fields = PyTuple_GET_ITEM(layout, 0), *defaults = PyTuple_GET_ITEM(layout, 1);
    Py_ssize_t n = PyTuple_GET_SIZE(fields), given = nargs - 1;
    Py_ssize_t nkw = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
    if (given > n) {
        PyErr_Format(PyExc_TypeError, "%.200s() takes %zd positional arguments but %zd were given",
                     tp->tp_name, n, given);
        return NULL;
    }
    PyObject *out = tp == &PyTuple_Type ? PyTuple_New(n) : tp->tp_alloc(tp, n);
    if (out == NULL)
        return NULL;
    PyObject **items = ((PyTupleObject *)out)->ob_item;  /* NULL until given */
    for (Py_ssize_t k = 0; k < given; k++) {
        Py_INCREF(args[k + 1]);
        items[k] = args[k + 1];
    }
    for (Py_ssize_t j = 0; j < nkw; j++) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, j);
        Py_ssize_t i = field_at(fields, name);
        if (i == -2)
            goto fail;
        if (i < 0 || items[i] != NULL) {
            PyErr_Format(PyExc_TypeError, i < 0 ? "%.200s() got an unexpected keyword argument '%U'"
                         : "%.200s() got multiple values for argument '%U'", tp->tp_name, name);
            goto fail;
        }
        Py_INCREF(args[nargs + j]);
        items[i] = args[nargs + j];
    }
    Py_ssize_t first = n - PyTuple_GET_SIZE(defaults);
    for (Py_ssize_t k = given; k < n; k++) {
        if (items[k] != NULL)
            continue;
        if (k < first) {
            PyErr_Format(PyExc_TypeError, "%.200s() missing required argument: '%U'",
                         tp->tp_name, PyTuple_GET_ITEM(fields, k));
            goto fail;
        }
        items[k] = PyTuple_GET_ITEM(defaults, k - first);
        Py_INCREF(items[k]);
    }
    return out;
fail:
    Py_DECREF(out);  /* its items so far, NULL ones skipped */
    return NULL;
}


static PyMethodDef methods[] = {
    {"replaced", (PyCFunction)(void (*)(void))replaced, METH_FASTCALL, replaced_doc},
    {"record_new", (PyCFunction)(void (*)(void))record_new, METH_FASTCALL | METH_KEYWORDS, record_new_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_tuples",
    "The model's records made in one allocation (see model/_tuples.c).", -1, methods,
};

PyMODINIT_FUNC
PyInit__tuples(void)
{
    if (layouts == NULL && (layouts = PyDict_New()) == NULL)
        return NULL;
    return PyModule_Create(&module_def);
}
