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

static PyMethodDef methods[] = {
    {"replaced", (PyCFunction)(void (*)(void))replaced, METH_FASTCALL, replaced_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_tuples",
    "The model's records made in one allocation (see model/_tuples.c).", -1, methods,
};

PyMODINIT_FUNC
PyInit__tuples(void)
{
    return PyModule_Create(&module_def);
}
