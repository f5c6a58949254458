# SPDX-License-Identifier: MIT
"""slanim SL animation I/O for Blender: File › Import › SL Animation (.anim, .bvh) and
File › Export › SL Animation (.anim), calling libslanim through the project's Python module
(tools/python; located as described in locate.py). See tools/blender/README.md."""

bl_info = {
    "name": "slanim: SL Animation (.anim, .bvh)",
    "author": "slanim",
    "version": (0, 1, 0),
    "blender": (3, 4, 0),
    "location": "File > Import/Export > SL Animation",
    "description": "Second Life animations through libslanim: import .anim/.bvh, export .anim "
                   "with priority, loop, ease, hand pose, emote and the upload validation report",
    "category": "Import-Export",
}

import bpy  # noqa: E402
from bpy.props import StringProperty  # noqa: E402

from . import export_op, import_op  # noqa: E402


class SlanimPreferences(bpy.types.AddonPreferences):
    bl_idname = __package__

    module_dir: StringProperty(
        name="slanim Python module folder", subtype="DIR_PATH", default="",
        description="Folder that contains the 'slanim' package (a build tree's build/python); "
                    "empty: SLANIM_PYTHONPATH, the installed package or the one bundled in the add-on")

    def draw(self, context):
        self.layout.prop(self, "module_dir")


def _menu_import(self, context):
    self.layout.operator(import_op.ImportSLAnimation.bl_idname, text="SL Animation (.anim, .bvh)")


def _menu_export(self, context):
    self.layout.operator(export_op.ExportSLAnimation.bl_idname, text="SL Animation (.anim)")


_CLASSES = (SlanimPreferences, import_op.ImportSLAnimation, export_op.ExportSLAnimation)


def register():
    for c in _CLASSES:
        bpy.utils.register_class(c)
    bpy.types.TOPBAR_MT_file_import.append(_menu_import)
    bpy.types.TOPBAR_MT_file_export.append(_menu_export)


def unregister():
    bpy.types.TOPBAR_MT_file_export.remove(_menu_export)
    bpy.types.TOPBAR_MT_file_import.remove(_menu_import)
    for c in reversed(_CLASSES):
        bpy.utils.unregister_class(c)
