"""Routes for comment annotations and activity logs (api-v2 §4.12–4.16; semantics §9, §10)."""

from __future__ import annotations

from server.routes import Endpoint
from toolkit.model import activities as act
from toolkit.model import annotations as ann
from toolkit.services import activities, annotations

A, L = "/v2/commentannotations", "/v2/activities"

ANNOTATION_ROUTES: list[Endpoint] = [
    # add validates the raw body itself: the annotations are stored exactly as sent
    Endpoint(f"{A}/add", None, annotations.add_annotations, ann.AnnotationsAdded, ann.AddAnnotations),
    Endpoint(f"{A}/get", ann.GetAnnotations, annotations.get_annotations, ann.AnnotationPage, ann.GetAnnotations),
    Endpoint(f"{A}/count/get", ann.CountAnnotations, annotations.count_annotations, ann.AnnotationCounts,
             ann.CountAnnotations),
    Endpoint(f"{A}/delete", ann.DeleteAnnotations, annotations.delete_annotations, ann.AnnotationsDeleted,
             ann.DeleteAnnotations),
    Endpoint(f"{A}/markread", ann.MarkRead, annotations.mark_read, ann.MarkedRead, ann.MarkRead),
    Endpoint(f"{L}/add", act.AddActivities, activities.add_activities, act.ActivitiesAdded, act.AddActivities),
    Endpoint(f"{L}/get", act.GetActivities, activities.get_activities, act.ActivityPage, act.GetActivities),
    Endpoint(f"{L}/update", act.UpdateActivities, activities.update_activities, act.ActivitiesChanged,
             act.UpdateActivities),
    Endpoint(f"{L}/delete", act.DeleteActivities, activities.delete_activities, act.ActivitiesChanged,
             act.DeleteActivities),
]
